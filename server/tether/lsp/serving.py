"""The read loop: messages from ``framing.Frames`` into pygls, over stdio here (over TCP,
``tcp.py`` uses the same loop once a connection has proved itself).

pygls's own loop (``pygls.io_.run_async``) allocates a body before it arrives, answers
nothing for one that is not JSON and loses its place after a bad header. This one stands in
its place with pygls's public parts only: the protocol's ``set_writer``, ``structure_message``,
``handle_message`` and ``get_message_type``, as pygls's ``start_io`` and ``start_tcp`` use
them. What pygls is not handed is answered here, with its request's id where it has one.

Before pygls sees a message, ``screen`` holds it to what JSON-RPC and LSP's lifecycle say
and pygls does not (pygls would answer some of these not at all, some with an internal
error, and carry out the rest; the LSP fuzz campaign found each):

- a request's id is an integer or a string; any other id is answered -32600 with id null;
- a method is a string, and no longer than any method is (-32601 past ``MAX_METHOD``); a
  message that is no request, notification or response is answered -32600 (id null); a
  response whose id is no integer or string answers nothing this side asked, and is dropped;
- a notification's method sent with an id is refused -32600, not carried out;
- before ``initialize``, a request is refused -32002 and a notification dropped; after
  it, a second ``initialize`` is refused -32600; after ``shutdown``, a request is refused
  -32600 and a notification dropped. ``exit`` is taken at any time.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import attrs
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCProtocol

from tether.children import reap_without_threads
from tether.lsp.framing import (
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    SERVER_NOT_INITIALIZED,
    Frames,
    Rejected,
    decode,
    request_id,
)

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer

log = logging.getLogger(__name__)
INTERRUPTED = 130  # the exit code after Ctrl-C
MAX_METHOD = 1024  # characters: a longer method name is no method anyone serves
EXIT_S = 5.0  # after the stop: the longest the process may take to end


async def pump(
    frames: Frames,
    protocol: JsonRPCProtocol,
    first: Any = None,
    before_exit: Callable[[], Awaitable[None]] | None = None,
    after_initialize: Callable[[], None] | None = None,
) -> int:
    """Hand each message to ``protocol`` (``first`` before the stream's) until the stream
    ends, 0, or the client's ``exit``, its exit code; ``exit`` only once ``before_exit``
    is done; ``after_initialize`` once ``initialize`` is answered, before the next."""
    lifecycle = Lifecycle()

    def hand(message: Any) -> None:
        nonlocal after_initialize
        handle(protocol, message, lifecycle)
        if after_initialize is not None and lifecycle.phase != "waiting":
            then = after_initialize
            after_initialize = None  # once
            try:
                then()
            except Exception:  # the server goes on; what needs the service says it is missing
                log.exception("could not finish starting")

    try:
        if first is not None:
            hand(first)
        while (item := await frames.next()) is not None:
            message = item if isinstance(item, Rejected) else decode(item)
            if isinstance(message, Rejected):
                answer(protocol, message)
                continue
            if before_exit and isinstance(message, dict) and is_exit(message):
                await before_exit()
            hand(message)
    except SystemExit as exc:  # how pygls's `exit` handler ends the server
        return exc.code if isinstance(exc.code, int) else 0
    return 0


def is_exit(message: dict[str, Any]) -> bool:
    return message.get("method") == "exit" and "id" not in message


@dataclass
class Lifecycle:
    """Where the client is in LSP's lifecycle, as the messages handed to pygls tell."""

    phase: Literal["waiting", "serving", "shutting down"] = "waiting"

    def refuses(self, method: str, msg_id: int | str | None) -> Rejected | Literal[False] | None:
        """The answer refusing this message; None to drop it unanswered; False to take it."""
        request = msg_id is not None
        if method == "exit":
            return False
        if self.phase == "waiting" and method != "initialize":
            why = "tether is not initialized yet: send `initialize` first"
            return Rejected(SERVER_NOT_INITIALIZED, why, msg_id) if request else None
        if self.phase == "serving" and method == "initialize" and request:
            return Rejected(INVALID_REQUEST, "tether is already initialized", msg_id)
        if self.phase == "shutting down":
            why = "tether is shutting down: only `exit` may follow `shutdown`"
            return Rejected(INVALID_REQUEST, why, msg_id) if request else None
        return False

    def handed(self, method: str, request: bool) -> None:
        """pygls was handed this message."""
        if request and method == "initialize":
            self.phase = "serving"
        elif request and method == "shutdown":
            self.phase = "shutting down"


def handle(protocol: JsonRPCProtocol, data: Any, lifecycle: Lifecycle) -> None:
    """One JSON value from the client: to pygls if it may go there, else answered (or, a
    notification or a response, dropped)."""
    screened = screen(protocol, data, lifecycle)
    if isinstance(screened, Rejected):
        answer(protocol, screened)
        return
    if screened is None:
        log.info("dropped a message: %.100s", data.get("method", "a response"))
        return
    try:
        message = protocol.structure_message(screened)
    except JsonRpcException as exc:  # the method's params do not fit it (pygls logged why)
        if (msg_id := request_id(data)) is not None:
            answer(protocol, Rejected(exc.code, f"{data['method']}: {exc.message}", msg_id))
        return
    if isinstance(method := data.get("method"), str):
        lifecycle.handed(method, "id" in data)
    try:
        protocol.handle_message(message)
    except Exception:  # pygls answers a request's own failures; this is the rest
        log.exception("could not handle a message")


def screen(
    protocol: JsonRPCProtocol, data: Any, lifecycle: Lifecycle
) -> dict[str, Any] | Rejected | None:
    """The message to hand pygls; else the error that answers it, or None to drop it."""
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        return Rejected(INVALID_REQUEST, "not a JSON-RPC 2.0 message", request_id(data))
    msg_id = data.get("id")
    valid_id = isinstance(msg_id, int | str) and not isinstance(msg_id, bool)
    if "method" not in data:
        if "id" not in data:
            return Rejected(INVALID_REQUEST, "neither a request, a notification nor a response")
        return data if valid_id else None  # a response; this side sends no other ids
    method = data["method"]
    if not isinstance(method, str):
        return Rejected(INVALID_REQUEST, "the method is not a string", request_id(data))
    if "id" in data and not valid_id:
        return Rejected(INVALID_REQUEST, "a request's id must be an integer or a string")
    refused = lifecycle.refuses(method, msg_id if valid_id else None)
    if refused is not False:
        return refused
    if len(method) > MAX_METHOD:  # no such method; pygls would cache its type by the name
        missing = f"method not found: {method[:100]}… ({len(method)} characters)"
        return Rejected(METHOD_NOT_FOUND, missing, msg_id) if valid_id else None
    if valid_id and _is_notification(protocol, method):
        why = f"`{method}` is a notification: it is sent without an id"
        return Rejected(INVALID_REQUEST, why, msg_id)
    # JSON-RPC lets a message leave its params out; pygls's message for a method it has no
    # type for would not structure without them (an internal error).
    return data if "params" in data else {**data, "params": None}


def _is_notification(protocol: JsonRPCProtocol, method: str) -> bool:
    """Whether LSP defines ``method`` as a notification (its message has no id)."""
    kind = protocol.get_message_type(method)
    return kind is not None and attrs.has(kind) and "id" not in attrs.fields_dict(kind)


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
        return asyncio.run(_served(frames, server))
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:
        log.error("the client closed the connection")
        return 0


async def _served(frames: Frames, server: TetherServer) -> int:
    reap_without_threads()
    code = await pump(
        frames, server.protocol, None, server.before_exit, after_initialize=server.build_service
    )
    return await ended(server, code)


async def ended(server: TetherServer, code: int) -> int:
    """The client has gone: stop as after ``shutdown``, and leave with ``code`` soon after
    whatever is left (over stdio and TCP alike)."""
    await server.wind_down()
    exit_within(EXIT_S, code)
    return code


def exit_within(seconds: float, code: int) -> None:
    """End the process with ``code`` if it still runs ``seconds`` from now. The server has
    stopped; what is left (the loop's last cancels, the worker threads' joins) must not
    keep alive a process that nobody talks to any more."""

    def end() -> None:
        time.sleep(seconds)
        with contextlib.suppress(Exception):  # the interpreter may be half gone
            log.warning("tether was still ending %g s after it stopped: it exits now", seconds)
        os._exit(code)

    threading.Thread(target=end, name="tether-exit", daemon=True).start()
