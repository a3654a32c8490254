"""``tether ask``, ``approve``, ``deny`` as processes: one ``Terminal`` client of the server
``launch.py`` started, with the terminal's logging, Ctrl-C and exit codes around it
(``client.py`` says what the client does)."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from pygls.exceptions import JsonRpcException

from tether.errors import ServerFailed
from tether.terminal import launch
from tether.terminal.client import Terminal

Body = Callable[[Terminal], Awaitable[int]]


def ask(start: launch.Start, prompt: str, session: str | None) -> int:
    argument = {"prompt": prompt} | ({"session": session} if session else {})
    return _main(start, lambda terminal: terminal.follow("tether.run", argument))


def decide(start: launch.Start, command: str, argument: dict[str, Any]) -> int:
    """``tether approve`` / ``tether deny``: decide a parked turn's calls, and watch it go on."""
    return _main(start, lambda terminal: terminal.follow(command, argument))


def _main(start: launch.Start, body: Body) -> int:
    debug = bool(os.environ.get("TETHER_DEBUG"))
    if debug:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="tether ask: %(message)s")
    else:  # pygls and asyncio would print tracebacks for what this client reports in a line
        for name in ("pygls", "asyncio", "tether.terminal"):
            logging.getLogger(name).addHandler(logging.NullHandler())
            logging.getLogger(name).propagate = False
    if isinstance(sys.stdout, io.TextIOWrapper):  # an answer must not die on one odd character
        sys.stdout.reconfigure(errors="replace")
    try:
        return asyncio.run(_session(start, debug, body))
    except KeyboardInterrupt:
        return 130
    finally:
        launch.stop_server(start.server)  # gone by now, unless this client failed


async def _session(start: launch.Start, debug: bool, body: Body) -> int:
    terminal = Terminal(start.workspace, debug, start.name)
    loop, main = asyncio.get_running_loop(), asyncio.current_task()
    assert main is not None
    try:
        loop.add_signal_handler(signal.SIGINT, terminal.interrupt, main.cancel)
    except NotImplementedError:  # Windows
        signal.signal(
            signal.SIGINT, lambda *_: loop.call_soon_threadsafe(terminal.interrupt, main.cancel)
        )
    options = None if start.options is None else {"tether": start.options}
    try:
        await terminal.start(start.server, options)
        try:
            code = await body(terminal)
        except JsonRpcException as exc:  # e.g. an unknown session
            terminal.console.end_text()
            terminal.console.note(f"tether: {exc.message}", "bad")
            code = 1
        await terminal.stop()
        return code
    except asyncio.CancelledError:  # Ctrl-C twice, or while no turn runs
        terminal.console.end_text()
        if terminal.session:
            terminal.console.note(f"session: {terminal.session}", None)
        await terminal.kill()
        return 130
    except ServerFailed as exc:
        terminal.console.end_text()
        terminal.console.note(str(exc), "bad")
        await terminal.kill()
        return 1
    finally:
        await terminal.close()
