"""The command line: ``tether serve``, and the terminal's ``ask``, ``sessions``,
``approve``, ``deny``, ``rules`` and ``forget``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tether import __version__, hardening

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "serve":
        return serve_lsp(args.tcp, args.log_level, args.allow_remote)
    return terminal(args)


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="tether", description="An LLM coding agent over LSP.")
    top.add_argument("--version", action="version", version=f"tether {__version__}")
    sub = top.add_subparsers(dest="command", required=True)
    _serve(sub.add_parser("serve", help="speak LSP (stdio by default)"))

    def at_workspace(name: str, says: str) -> argparse.ArgumentParser:
        command = sub.add_parser(name, help=says)
        command.add_argument("--workspace", type=Path, default=Path.cwd())
        return command

    ask = at_workspace("ask", "ask tether from the terminal")
    ask.add_argument("prompt", nargs="+")
    ask.add_argument("--session", help="continue this session")
    at_workspace("sessions", "list this workspace's sessions")
    at_workspace("rules", "list the approvals this workspace remembers")
    forget = at_workspace("forget", "forget a remembered approval (an ID from `rules`)")
    forget.add_argument("rule", metavar="ID")
    for verb, says in (("approve", "allow"), ("deny", "deny")):
        decide = at_workspace(verb, f"{says} a parked turn's calls, then let it run on")
        decide.add_argument("session")
        decide.add_argument("--call", action="append", dest="calls", help="only this call id")
        if verb == "approve":
            decide.add_argument("--remember", choices=["session", "workspace"])
        else:
            decide.add_argument("--reason")
    return top


def _serve(serve: argparse.ArgumentParser) -> None:
    serve.add_argument("--stdio", action="store_true", help="the default; accepted for editors")
    serve.add_argument(
        "--tcp",
        metavar="HOST:PORT",
        help="listen on TCP instead of stdio, on a loopback address (PORT 0: a free port). "
        "Prints `listening on HOST:PORT` and the token file (STATE_DIR/tcp-token, mode 0600) "
        "to stderr; a connection is served only if its initialize sends that token as "
        "initializationOptions.tether.token",
    )
    serve.add_argument(
        "--allow-remote",
        action="store_true",
        help="let --tcp listen on an address that is not loopback: then anyone who can reach "
        "it and holds the token runs commands, over an unencrypted connection",
    )
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])


def terminal(args: argparse.Namespace) -> int:
    """The terminal's commands: each an LSP client of a `tether serve` it starts."""
    from tether.terminal import client

    workspace = args.workspace.resolve()
    match args.command:
        case "ask":
            return client.ask(" ".join(args.prompt), workspace, args.session)
        case "approve" | "deny":
            extra = ("remember",) if args.command == "approve" else ("reason",)
            argument = {"session": args.session} | {
                key: getattr(args, key) for key in ("calls", *extra) if getattr(args, key)
            }
            return client.decide(workspace, f"tether.{args.command}", argument)
        case "rules":
            return client.rules(workspace)
        case "forget":
            return client.forget(workspace, args.rule)
    return client.sessions(workspace)


def serve_lsp(tcp: str | None, level: str, allow_remote: bool = False) -> int:
    # Stdout belongs to JSON-RPC: logs go to stderr (and window/logMessage).
    logging.basicConfig(
        stream=sys.stderr, level=level, format="tether %(levelname)s %(name)s: %(message)s"
    )
    from tether.outbound import RedactingFilter

    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())  # a key never reaches the log, even at DEBUG
    if level != "DEBUG":
        # pygls logs every message it sends at INFO: the whole transcript, again.
        logging.getLogger("pygls").setLevel(logging.WARNING)
    from tether.lsp import serving
    from tether.lsp import tcp as over_tcp
    from tether.lsp.server import create_server

    def served() -> TetherServer:
        server = create_server()  # the settings read the keys: they leave the process now
        hardening.forget_keys()
        hardening.make_undumpable()
        return server

    if tcp is None:
        if allow_remote:
            print("tether: --allow-remote goes with --tcp", file=sys.stderr)
            return 2
        return serving.serve_stdio(served())
    try:
        address = over_tcp.Address.parse(tcp, allow_remote)
    except over_tcp.BadAddress as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    server = served()
    try:
        return over_tcp.serve_tcp(server, address, server.config.current.state_dir)
    except OSError as exc:  # the port is taken, the state dir cannot be written...
        print(f"tether: cannot serve on {tcp}: {exc}", file=sys.stderr)
        return 1
