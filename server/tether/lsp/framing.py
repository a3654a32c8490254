"""LSP's base protocol, read with limits: header lines, a blank line, then a body of exactly
``Content-Length`` bytes.

Broken or hostile input costs no more memory than what has arrived, and never ends the
server. Each of these is a ``Rejected`` frame, for the caller to answer (``id`` null), after
which reading goes on with the next message:

- a ``Content-Length`` above the limit (``MAX_MESSAGE_BYTES``): rejected at once, before its
  body comes; the body is then read and dropped chunk by chunk, so the stream stays in step;
- a header block without one valid ``Content-Length``, or with a line longer than
  ``MAX_HEADER_LINE`` (dropped as it arrives): rejected, and no body is read. Should a body
  follow anyway (or the rest of one whose length was too short), it runs into the next
  message's first header line; the bytes before that line's ``Content-Length`` are
  dropped, however many, so one bad frame never spoils the ones after it;
- a body that is not JSON (``decode``): ``-32700``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

MAX_MESSAGE_BYTES = 64 * 2**20  # the largest message body read, in bytes
MAX_HEADER_LINE = 4096  # bytes
CHUNK = 64 * 1024  # the most read from the connection at a time

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
SERVER_NOT_INITIALIZED = -32002

_HEADER = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:(.*)")
_LONGEST_LENGTH = 18  # digits of a Content-Length that are read


class Source(Protocol):
    async def read(self, n: int) -> bytes:
        """At most ``n`` bytes, as soon as some have arrived; ``b""`` at the end."""
        ...


@dataclass(frozen=True)
class Rejected:
    """A message the server does not handle, and the JSON-RPC error that answers it."""

    code: int
    message: str
    id: int | str | None = None

    def answer(self) -> bytes:
        error = {"code": self.code, "message": self.message}
        return frame({"jsonrpc": "2.0", "id": self.id, "error": error})


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()  # ASCII: escapes keep the length in bytes exact
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def decode(body: bytes) -> Any:
    """The body's JSON value, or a ``Rejected`` parse error (not JSON, not UTF-8, nested
    deeper than the parser goes). UTF-8 strictly: ``json.loads`` would take bytes in
    UTF-16 or UTF-32 too, and UTF-8 that encodes a surrogate."""
    try:
        return json.loads(body.decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return Rejected(PARSE_ERROR, f"parse error: the message is not valid JSON ({exc})")


def request_id(message: Any) -> int | str | None:
    """The id to answer a request with; None for anything that is not a request."""
    if not isinstance(message, dict) or "method" not in message:
        return None
    found = message.get("id")
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None


def _length(value: bytes) -> int | None:
    """A Content-Length's value; more digits than ``_LONGEST_LENGTH`` count as that many
    nines (certainly above any limit, and no huge number is ever built)."""
    if not value.isdigit():
        return None
    digits = value.lstrip(b"0") or b"0"
    return int(digits) if len(digits) <= _LONGEST_LENGTH else 10**_LONGEST_LENGTH - 1


class Frames:
    """The messages of one stream, as bodies (bytes), ``Rejected`` frames, then None at
    its end. ``limit`` may change between messages (a connection not yet trusted gets a
    smaller one)."""

    def __init__(self, source: Source, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.source = source
        self.limit = limit
        self._buffer = bytearray()
        self._searched = 0  # the buffer holds no line end before this offset
        self._ended = False
        self._skip = 0  # bytes of a rejected body still to drop

    async def next(self) -> bytes | Rejected | None:
        if not await self._drop(self._skip):
            return None
        self._skip = 0
        length = await self._headers()
        if length is None or isinstance(length, Rejected):
            return length
        if length > self.limit:
            self._skip = length  # dropped as it arrives, once the caller has answered
            return Rejected(
                INVALID_REQUEST,
                f"message too large: {length} bytes; the limit is {self.limit} bytes",
            )
        while len(self._buffer) < length:
            if not await self._fill():
                return None
        body = bytes(self._buffer[:length])
        del self._buffer[:length]
        self._searched = 0
        return body

    async def _headers(self) -> int | Rejected | None:
        """The header block's Content-Length; a Rejected header block; None at the end."""
        length: int | None = None
        fault: str | None = None
        seen = 0
        while True:
            read = await self._line()
            if read is None:
                return None
            line, too_long = read
            if not line and not too_long:
                if seen:
                    break
                continue  # blank lines between messages
            if not seen and (start := line.lower().rfind(b"content-length")) > 0:
                # after the tail of a body that was sent without a length (or with too short
                # a one), however long that tail was
                line, too_long = line[start:], False
            if too_long:
                fault = fault or f"a header line is longer than {MAX_HEADER_LINE} bytes"
                seen += 1
                continue
            seen += 1
            header = _HEADER.fullmatch(line)
            if header is None:
                fault = fault or "a header line is not `Name: value`"
            elif header[1].lower() == b"content-length":
                given = _length(header[2].strip())
                if given is None or length not in (None, given):
                    fault = fault or "Content-Length is not one whole number of bytes"
                length = given
        if fault is None and length is None:
            fault = "no Content-Length header"
        if fault is not None or length is None:
            return Rejected(INVALID_REQUEST, f"invalid message header: {fault}")
        return length

    async def _line(self) -> tuple[bytes, bool] | None:
        """The next line without its line end, and whether it was longer than
        ``MAX_HEADER_LINE`` (of such a line only the tail is kept, to find a header that
        ends it); None at the end of the stream."""
        too_long = False
        while True:
            end = self._buffer.find(b"\n", self._searched)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._searched = 0
                return line.removesuffix(b"\r"), too_long or len(line) > MAX_HEADER_LINE + 1
            if len(self._buffer) > MAX_HEADER_LINE:
                del self._buffer[:-MAX_HEADER_LINE]  # kept no longer than a header line
                too_long = True
            self._searched = len(self._buffer)
            if not await self._fill():
                return None

    async def _fill(self) -> bool:
        if self._ended:
            return False
        data = await self.source.read(CHUNK)
        if not data:
            self._ended = True
            return False
        self._buffer += data
        return True

    async def _drop(self, count: int) -> bool:
        """Drop ``count`` bytes as they arrive; False if the stream ends first."""
        kept = min(count, len(self._buffer))
        del self._buffer[:kept]
        self._searched = 0
        count -= kept
        while count > 0:
            data = await self.source.read(min(CHUNK, count))
            if not data:
                self._ended = True
                return False
            count -= len(data)
        return True
