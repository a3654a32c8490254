"""ACP's wire: one JSON-RPC message a line, over a pair of file descriptors.

The SDK's own stdio streams skip a line that is not JSON without a word, stop on a line
that is JSON but no object, and hold a line of any length in memory. This transport stands
in their place (the SDK's ``Transport`` seam): a line longer than ``MAX_LINE_BYTES`` is
dropped as it arrives and answered, a line that is not JSON is answered ``-32700``, and
one that is no JSON-RPC 2.0 object ``-32600`` (with its id, where it has one), as
JSON-RPC says; the connection goes on either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import threading
from typing import Any

from tether.outbound import outbound_json

log = logging.getLogger(__name__)
MAX_LINE_BYTES = 64 * 2**20  # as the LSP front's largest message
READ_CHUNK = 65536
PARSE_ERROR, INVALID_REQUEST = -32700, -32600


class LineReader:
    """Lines from ``fd``, read by one daemon thread (it never holds the process up at exit);
    a line past ``limit`` comes back as ``None`` in its place, its bytes never kept."""

    def __init__(self, fd: int, limit: int = MAX_LINE_BYTES) -> None:
        self.fd, self.limit = fd, limit
        self._lines: asyncio.Queue[bytes | EOFError | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._serve, name="tether-acp-stdin", daemon=True).start()

    async def next(self) -> bytes | EOFError | None:
        return await self._lines.get()

    def _put(self, item: bytes | EOFError | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody reads any more
            self._loop.call_soon_threadsafe(self._lines.put_nowait, item)

    def _serve(self) -> None:
        buffer, too_long = bytearray(), False
        while True:
            try:
                data = os.read(self.fd, READ_CHUNK)
            except OSError as exc:
                log.info("stdin: %s", exc)
                data = b""
            if not data:
                self._put(EOFError())
                return
            *lines, rest = data.split(b"\n")
            for line in lines:
                self._put(None if too_long else bytes(buffer + line))
                buffer, too_long = bytearray(), False
            if not too_long:
                buffer += rest
            if len(buffer) > self.limit:
                buffer, too_long = bytearray(), True


class LineWriter:
    """Whole lines to ``fd``, in the order sent, written in a thread (a client that stops
    reading blocks the writer, never the loop)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = asyncio.Lock()

    async def write(self, line: bytes) -> None:
        async with self._lock:
            await asyncio.to_thread(self._write_all, line)

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view) :]


def encoded(message: dict[str, Any]) -> bytes:
    """A message as one line: secrets redacted, lone surrogates escaped."""
    text = json.dumps(outbound_json(message), separators=(",", ":"), ensure_ascii=False)
    return text.encode("utf-8", "surrogateescape") + b"\n"


class LineTransport:
    """The SDK's message ``Transport`` over ``LineReader`` and ``LineWriter``."""

    def __init__(self, reader: LineReader, writer: LineWriter) -> None:
        self.reader, self.writer = reader, writer
        self.closed = False
        self.unanswered: set[int | str] = set()  # the client's requests not answered yet
        self._all_answered = asyncio.Event()

    async def send(self, message: dict[str, Any]) -> None:
        if self.closed:
            raise ConnectionError("the client has gone")
        try:
            await self.writer.write(encoded(message))
        except OSError as exc:  # the client closed its end
            self.closed = True
            self._all_answered.set()
            raise ConnectionError(f"the client has gone: {exc}") from None
        if "method" not in message and message.get("id") is not None:
            self.unanswered.discard(message["id"])
            if not self.unanswered:
                self._all_answered.set()

    async def answered(self, seconds: float) -> None:
        """Every request the client sent is answered (or the client stopped reading, or
        ``seconds`` passed): a client that closes its end of stdin still reads the answers
        to what it sent before."""
        if self.unanswered and not self.closed:
            self._all_answered.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._all_answered.wait(), seconds)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self.reader.next()
            if isinstance(line, EOFError):
                return None
            if line is None:
                await self._refuse(INVALID_REQUEST, f"a line longer than {MAX_LINE_BYTES} bytes")
                continue
            if not line.strip():
                continue
            message = await self._screen(line)
            if message is not None:
                if "method" in message and "id" in message:
                    self.unanswered.add(message["id"])
                return message

    async def _screen(self, line: bytes) -> dict[str, Any] | None:
        try:
            data = json.loads(line)
        except (ValueError, RecursionError) as exc:
            await self._refuse(PARSE_ERROR, f"not JSON: {exc}")
            return None
        if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
            await self._refuse(INVALID_REQUEST, "not a JSON-RPC 2.0 object", _id(data))
            return None
        msg_id = data.get("id")
        if "id" in data and (not isinstance(msg_id, int | str) or isinstance(msg_id, bool)):
            await self._refuse(INVALID_REQUEST, "a request's id must be an integer or a string")
            return None
        method = data.get("method")
        if "method" in data and not isinstance(method, str):
            await self._refuse(INVALID_REQUEST, "the method is not a string", _id(data))
            return None
        if method is None and "id" not in data:
            await self._refuse(INVALID_REQUEST, "neither a request, a notification nor a response")
            return None
        return data

    async def _refuse(self, code: int, why: str, msg_id: int | str | None = None) -> None:
        log.info("answered a bad message: %s", why)
        error = {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": why}}
        with contextlib.suppress(ConnectionError):  # the client has gone
            await self.send(error)

    async def close(self) -> None:
        self.closed = True


def _id(data: Any) -> int | str | None:
    msg_id = data.get("id") if isinstance(data, dict) else None
    return msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) else None
