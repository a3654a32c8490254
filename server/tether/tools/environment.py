"""The environment every child process gets: the server's, without tether's settings,
the providers' keys, or any secret's value (a command could print or send them)."""

from __future__ import annotations

import os

HIDDEN = frozenset({"OPENAI_API_KEY", "ANTHROPIC_API_KEY"})


def child_environment(secrets: tuple[str, ...]) -> dict[str, str]:
    hidden = {secret for secret in secrets if secret}
    return {
        name: value
        for name, value in os.environ.items()
        if not name.upper().startswith("TETHER_")
        and name.upper() not in HIDDEN
        and value not in hidden
    }
