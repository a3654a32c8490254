"""What the terminal's commands settle before they speak LSP, without pygls: the settings
in ``TETHER_ASK_OPTIONS``, the workspace, and the ``tether serve`` they talk to.

The server is started first of all, before this process imports pygls and lsprotocol:
each side spends most of its start-up importing them, and this way the two overlap
instead of one waiting for the other.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Start:
    """A terminal command on its way: its name (the ``clientInfo.name`` the server is
    given), the workspace, the settings, and the server, already starting."""

    name: str
    workspace: Path
    options: dict[str, Any] | None
    server: subprocess.Popen[bytes]


class BadOptions(ValueError):
    """``TETHER_ASK_OPTIONS`` is not a JSON object; the message says what it is."""


def ask_options(env: Mapping[str, str]) -> dict[str, Any] | None:
    """The settings ``TETHER_ASK_OPTIONS`` holds, for ``initializationOptions``; None: unset."""
    try:
        options = json.loads(env.get("TETHER_ASK_OPTIONS") or "null")
    except ValueError as exc:
        raise BadOptions(f"TETHER_ASK_OPTIONS must be a JSON object: {exc}") from None
    if options is not None and not isinstance(options, dict):
        got = type(options).__name__
        raise BadOptions(f"TETHER_ASK_OPTIONS must be a JSON object: got {got}")
    return options


def workspace_root(given: Path | None, cwd: Path) -> Path:
    """``given`` as it is; else the git root above ``cwd`` (a ``.git`` folder or file, as
    a worktree or submodule has), else ``cwd``: the root the Neovim client takes too."""
    if given is not None:
        return given.resolve()
    here = cwd.resolve()
    for folder in (here, *here.parents):
        if (folder / ".git").exists():
            return folder
    return here


def start_server(env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """``python -m tether serve`` on pipes, in its own process group: Ctrl-C at the
    terminal reaches this client only, which cancels the turn through the server."""
    own_group: dict[str, Any] = {"start_new_session": True}
    if sys.platform == "win32":
        own_group = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
    return subprocess.Popen(
        [sys.executable, "-m", "tether", "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=dict(env),
        **own_group,
    )


def stop_server(server: subprocess.Popen[bytes]) -> None:
    """Kill a server nobody will talk to (this process failed before it could)."""
    if server.poll() is None:
        server.kill()
    server.wait()
    for pipe in (server.stdin, server.stdout, server.stderr):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()
