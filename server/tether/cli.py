"""The command line: ``tether serve``, ``tether ask``, ``tether sessions``."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from tether import __version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tether", description="An LLM coding agent over LSP.")
    parser.add_argument("--version", action="version", version=f"tether {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="speak LSP (stdio by default)")
    serve.add_argument("--stdio", action="store_true", help="the default; accepted for editors")
    serve.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio")
    serve.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"])

    ask = sub.add_parser("ask", help="ask tether from the terminal")
    ask.add_argument("prompt", nargs="+")
    ask.add_argument("--workspace", type=Path, default=Path.cwd())
    ask.add_argument("--session", help="continue this session")

    sessions = sub.add_parser("sessions", help="list this workspace's sessions")
    sessions.add_argument("--workspace", type=Path, default=Path.cwd())

    for verb, says in (("approve", "allow"), ("deny", "deny")):
        decide = sub.add_parser(verb, help=f"{says} a parked turn's calls, then let it run on")
        decide.add_argument("session")
        decide.add_argument("--call", action="append", dest="calls", help="only this call id")
        decide.add_argument("--workspace", type=Path, default=Path.cwd())
        if verb == "approve":
            decide.add_argument("--remember", choices=["session", "workspace"])
        else:
            decide.add_argument("--reason")

    args = parser.parse_args(argv)
    if args.command == "serve":
        return serve_lsp(args.tcp, args.log_level)

    from tether.terminal import client as terminal

    if args.command == "ask":
        return terminal.ask(" ".join(args.prompt), args.workspace.resolve(), args.session)
    if args.command in ("approve", "deny"):
        extra = ("remember",) if args.command == "approve" else ("reason",)
        argument = {"session": args.session} | {
            key: getattr(args, key) for key in ("calls", *extra) if getattr(args, key)
        }
        return terminal.decide(args.workspace.resolve(), f"tether.{args.command}", argument)
    return terminal.sessions(args.workspace.resolve())


def serve_lsp(tcp: str | None, level: str) -> int:
    # Stdout belongs to JSON-RPC: logs go to stderr (and window/logMessage).
    logging.basicConfig(
        stream=sys.stderr, level=level, format="tether %(levelname)s %(name)s: %(message)s"
    )
    if level != "DEBUG":
        # pygls logs every message it sends at INFO: the whole transcript, again.
        logging.getLogger("pygls").setLevel(logging.WARNING)
    from tether.lsp.server import create_server

    server = create_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        if not host or not port.isdigit():
            print(f"tether: --tcp wants HOST:PORT, got {tcp!r}", file=sys.stderr)
            return 2
        server.start_tcp(host, int(port))
    else:
        server.start_io()
    return 0
