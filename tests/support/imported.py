"""What a worker process has imported: importable by name, so that a worker can be
handed it."""

from __future__ import annotations

import sys


def among(prefixes: tuple[str, ...]) -> list[str]:
    """The modules imported so far whose names start with one of ``prefixes``."""
    return sorted(name for name in sys.modules if name.startswith(prefixes))
