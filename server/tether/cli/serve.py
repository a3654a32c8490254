"""``tether serve``: the log set up on stderr, then the LSP server over stdio or TCP.

The server's modules are imported inside ``serve_lsp``, once the log is set up: importing
the command line loads none of them.
"""

from __future__ import annotations

import logging
import signal
import sys
from typing import TYPE_CHECKING

from tether import hardening

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer


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

    def served(server: TetherServer) -> TetherServer:
        hardening.forget_keys()  # the server has its copy of the environment: the keys go
        hardening.make_undumpable()
        signal.signal(signal.SIGINT, signal.default_int_handler)  # it serves: a clean stop
        return server

    if tcp is None:
        if allow_remote:
            print("tether: --allow-remote goes with --tcp", file=sys.stderr)
            return 2
        if sys.stdin.isatty():  # started by hand, not by an editor
            print(
                "tether serve: speaking LSP on stdin and stdout (an editor starts this "
                "itself; `tether ask` talks to it for you). Ctrl-C stops it.",
                file=sys.stderr,
            )
        return serving.serve_stdio(served(create_server()))
    try:
        address = over_tcp.Address.parse(tcp, allow_remote)
    except over_tcp.BadAddress as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 2
    server = create_server()
    state_dir = server.config.current.state_dir  # loaded while a Ctrl-C still ends it at once
    try:
        return over_tcp.serve_tcp(served(server), address, state_dir)
    except OSError as exc:  # the port is taken, the state dir cannot be written...
        print(f"tether: cannot serve on {tcp}: {exc}", file=sys.stderr)
        return 1
