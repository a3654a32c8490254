"""The environment every child process gets: the server's, without tether's settings,
the providers' keys, or any secret's value (a command could print or send them); and
settings this process alone takes from its environment, which no child ever sees."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator

HIDDEN = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})
_CHANGING = threading.Lock()  # held while ``for_this_process`` has the environment changed


def child_environment(secrets: tuple[str, ...]) -> dict[str, str]:
    hidden = {secret for secret in secrets if secret}
    with _CHANGING:
        now = list(os.environ.items())
    return {
        name: value
        for name, value in now
        if not name.upper().startswith("TETHER_")
        and name.upper() not in HIDDEN
        and value not in hidden
    }


@contextlib.contextmanager
def for_this_process(**values: str) -> Iterator[None]:
    """``values`` in this process's environment for the block only: for a library that
    reads its settings from the environment as it loads. A child's environment taken
    meanwhile (``child_environment``) waits for the block's end, and never holds them."""
    with _CHANGING:
        before = {name: os.environ.get(name) for name in values}
        os.environ.update(values)
        try:
            yield
        finally:
            for name, value in before.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
