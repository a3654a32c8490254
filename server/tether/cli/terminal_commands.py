"""The terminal's commands: which are answered from the store, and which through a
``tether serve`` they start (an LSP client of it, as an editor is).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any


def terminal(args: argparse.Namespace) -> int:
    """The terminal's commands. ``sessions``, ``rules``, ``forget`` and ``rewind`` read the
    store themselves, as does an ``approve`` / ``deny`` with nothing to decide: no server,
    an answer well within a second. The rest are LSP clients of a ``tether serve`` they
    start, before anything else is imported (pygls and lsprotocol cost about a third of a
    second on either side), so that its start-up overlaps the client's."""
    from tether.terminal import launch

    try:
        options = launch.ask_options(os.environ)
    except launch.BadOptions as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 1
    workspace = launch.workspace_root(args.workspace, Path.cwd())
    if args.command == "doctor":
        from tether.terminal import doctor

        return doctor.report(os.environ, options, workspace)
    if args.command in STORE_COMMANDS:
        code = _from_store(args, options, workspace)
        if code is not None:
            return code
    return _through_a_server(args, options, workspace)


STORE_COMMANDS = ("sessions", "rules", "forget", "rewind", "approve", "deny")


def _from_store(
    args: argparse.Namespace, options: dict[str, Any] | None, workspace: Path
) -> int | None:
    """Answer from the store; None when a server must do it (a decision that can run)."""
    from tether.terminal import from_store

    try:
        with from_store.opened(os.environ, options) as store:
            match args.command:
                case "sessions":
                    return from_store.sessions(store, workspace)
                case "rules":
                    return from_store.rules(store, workspace)
                case "forget":
                    return from_store.forget(store, workspace, args.rule)
                case "rewind":
                    return from_store.rewind(store, workspace, args.session, args.turn, args.what)
            nothing = from_store.undecidable(store, args.session)
    except from_store.Unreadable as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 1
    if nothing is not None:
        print(f"tether: {nothing}", file=sys.stderr)
        return 1
    return None


def _through_a_server(
    args: argparse.Namespace, options: dict[str, Any] | None, workspace: Path
) -> int:
    from tether.terminal import launch

    try:
        server = launch.start_server(os.environ)
    except OSError as exc:
        print(f"tether: could not start the server: {exc}", file=sys.stderr)
        return 1
    start = launch.Start(f"tether {args.command}", workspace, options, server)
    try:
        from tether.terminal import run
    except BaseException:
        launch.stop_server(server)
        raise
    if args.command == "ask":
        return run.ask(start, " ".join(args.prompt), args.session)
    extra = ("remember",) if args.command == "approve" else ("reason",)
    argument = {"session": args.session} | {
        key: getattr(args, key) for key in ("calls", *extra) if getattr(args, key)
    }
    return run.decide(start, f"tether.{args.command}", argument)
