"""The read loop: messages from ``framing.Frames`` into pygls, over stdio here (over TCP,
``tcp.py`` uses the same loop once a connection has proved itself).

pygls's own loop (``pygls.io_.run_async``) allocates a body before it arrives, answers
nothing for one that is not JSON and loses its place after a bad header. This one stands in
its place with pygls's public parts only: the protocol's ``set_writer``, ``structure_message``
and ``handle_message``, as pygls's ``start_io`` and ``start_tcp`` use them. What pygls is
not handed is answered here, with its request's id where it has one.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import sys
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCProtocol

from tether.lsp.framing import INVALID_REQUEST, Frames, Rejected, decode, request_id

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer

log = logging.getLogger(__name__)
INTERRUPTED = 130  # the exit code after Ctrl-C


async def pump(
    frames: Frames,
    protocol: JsonRPCProtocol,
    first: Any = None,
    before_exit: Callable[[], Awaitable[None]] | None = None,
) -> int:
    """Hand each message to ``protocol`` (``first`` before the stream's) until the stream
    ends, 0, or the client's ``exit``, its exit code; ``exit`` only once ``before_exit``
    is done."""
    try:
        if first is not None:
            handle(protocol, first)
        while (item := await frames.next()) is not None:
            message = item if isinstance(item, Rejected) else decode(item)
            if isinstance(message, Rejected):
                answer(protocol, message)
                continue
            if before_exit and isinstance(message, dict) and message.get("method") == "exit":
                await before_exit()
            handle(protocol, message)
    except SystemExit as exc:  # how pygls's `exit` handler ends the server
        return exc.code if isinstance(exc.code, int) else 0
    return 0


def handle(protocol: JsonRPCProtocol, data: Any) -> None:
    """One JSON value from the client: to pygls if it is a JSON-RPC message, else answered."""
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        answer(protocol, Rejected(INVALID_REQUEST, "not a JSON-RPC 2.0 message", request_id(data)))
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:  # the method's params do not fit it (pygls logged why)
        if (msg_id := request_id(data)) is not None:
            answer(protocol, Rejected(exc.code, f"{data['method']}: {exc.message}", msg_id))
        return
    try:
        protocol.handle_message(message)
    except Exception:  # pygls answers a request's own failures; this is the rest
        log.exception("could not handle a message")


def answer(protocol: JsonRPCProtocol, rejected: Rejected) -> None:
    log.info("answered a bad message: %s", rejected.message)
    if protocol.writer is not None:
        protocol.writer.write(rejected.answer())


class StdinSource:
    """stdin as a ``framing.Source``: read by one daemon thread with ``os.read``, which
    returns what has arrived (nothing is allocated for bytes still to come) and, unlike a
    buffered reader or an executor's thread, never holds the process up at exit."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._wanted: queue.SimpleQueue[tuple[int, asyncio.Future[bytes]]] = queue.SimpleQueue()
        self._reader: threading.Thread | None = None

    async def read(self, n: int) -> bytes:
        future: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        if self._reader is None:
            self._reader = threading.Thread(target=self._serve, name="tether-stdin", daemon=True)
            self._reader.start()
        self._wanted.put((n, future))
        return await future

    def _serve(self) -> None:
        while True:
            n, future = self._wanted.get()
            try:
                data = os.read(self.fd, n)
            except OSError as exc:
                log.info("stdin: %s", exc)
                data = b""
            try:
                future.get_loop().call_soon_threadsafe(_settle, future, data)
            except RuntimeError:  # the loop is closed: nobody reads any more
                return


def _settle(future: asyncio.Future[bytes], data: bytes) -> None:
    if not future.done():
        future.set_result(data)


def serve_stdio(server: TetherServer) -> int:
    """Serve one client over stdin and stdout until it exits or hangs up."""
    server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
    frames = Frames(StdinSource(sys.stdin.fileno()))
    try:
        return asyncio.run(pump(frames, server.protocol, before_exit=server.before_exit))
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        log.error("the client closed the connection")
        return 0
