"""The command line: ``tether serve``, ``tether acp``, and the terminal's ``ask``,
``sessions``, ``approve``, ``deny``, ``rules``, ``forget``, ``rewind`` and ``doctor``.

``main`` picks the command; what each takes and its help (environment, exit codes) is
``parser.py``; ``serve.py`` starts the LSP server; ``terminal_commands.py`` answers a
terminal command from the store or through a server it starts. Everything past the
parser is imported late: a short command must not wait for pygls.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from typing import NoReturn

from tether.acp import command as acp_command
from tether.cli.parser import parser
from tether.cli.serve import serve_lsp
from tether.cli.terminal_commands import terminal


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "serve":
        # Ctrl-C while it starts ends it at once: a KeyboardInterrupt raised inside an
        # extension's import (pydantic_core's) is a Rust panic with a traceback, exit 1.
        signal.signal(signal.SIGINT, _interrupted_while_starting)
        try:
            return serve_lsp(args.tcp, args.log_level, args.allow_remote)
        except KeyboardInterrupt:  # Ctrl-C while it starts: as quiet as once it serves
            return 130
    if args.command == "acp":
        return acp_command.run(args)
    code = terminal(args)
    if argv is None:  # the process's own command line: nothing after this but its exit
        leave_now(code)
    return code


def _interrupted_while_starting(signum: int, frame: object) -> None:
    os._exit(130)  # nothing is open yet: as quiet as a Ctrl-C once it serves


def leave_now(code: int) -> NoReturn:
    """End a terminal command's process without tearing the interpreter down: its server
    has stopped and its output is flushed here, and unloading pygls, lsprotocol and
    pydantic module by module would add about 0.1 s to every command."""
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nobody reads it
            stream.flush()
    os._exit(code)
