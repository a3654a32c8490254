"""Server-Sent Events, parsed incrementally from a stream of lines.

Both the OpenAI and the Anthropic streaming APIs speak SSE; the parser knows
nothing of either. Sentinels such as OpenAI's ``[DONE]`` are the caller's business.

Stricter than the spec in two ways: a line that is no SSE field at all (an HTML
error page, llama.cpp's ``error: {...}``) is reported, where the spec would skip it
and leave the caller waiting for a reply that never comes; and a line or an event
past its limit stops the stream, where buffering it would let a provider fill memory.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, NamedTuple

from pydantic_core import from_json

from tether.providers.failures import not_an_event, over_limit, size, unreadable

FIELDS = frozenset({"data", "event", "id", "retry"})
LINE_LIMIT = 8 * 2**20  # bytes in one line of a stream
EVENT_LIMIT = 8 * 2**20  # characters of data in one event, over all its lines
_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


class ServerSentEvent(NamedTuple):
    """One event. A tuple, not a frozen dataclass: one is made for every event of every
    reply, and a frozen dataclass's ``__init__`` costs five times as much."""

    event: str = "message"
    data: str = ""
    id: str | None = None


class SSEDecoder:
    """Feed lines (without their line ending) one at a time; get an event at each blank line."""

    def __init__(self) -> None:
        self._event = ""
        # An event's data is most often one line: it is kept as it is; a second line
        # starts a buffer, not a list of lines (a million short lines cost some 60 bytes
        # each in a list).
        self._first: str | None = None
        self._data: io.StringIO | None = None
        self._size = 0
        self._id: str | None = None
        self._started = False

    def feed(self, line: str) -> ServerSentEvent | None:
        if not self._started:
            # The spec lets a stream open with a byte order mark.
            line = line.removeprefix("\ufeff")
            self._started = True
        if not line:
            return self.flush()
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self._add_data(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\x00" not in value:
            self._id = value
        elif name not in FIELDS:
            raise not_an_event(line)
        return None

    def flush(self) -> ServerSentEvent | None:
        """The event gathered so far, if it has any data; the decoder starts afresh."""
        first, data = self._first, self._data
        self._first, self._data, self._size = None, None, 0
        event, self._event = self._event, ""
        if first is None:
            return None
        return ServerSentEvent(
            event or "message", first if data is None else data.getvalue(), self._id
        )

    def _add_data(self, value: str) -> None:
        self._size += len(value) + 1
        if self._size > EVENT_LIMIT:
            raise over_limit(
                f"an event of more than {EVENT_LIMIT:,} characters, past tether's event limit"
            )
        if self._first is None:
            self._first = value
            return
        if self._data is None:
            # The buffer holds the first line from now on: a second copy of a long one
            # would double what an event may hold.
            self._data = io.StringIO(self._first)
            self._data.seek(0, io.SEEK_END)
            self._first = ""
        self._data.write("\n")
        self._data.write(value)


class EventStream:
    """A body's bytes in, its whole events out: split into lines on CR, LF and CRLF alike,
    each at most ``LINE_LIMIT`` bytes (a longer one stops the stream rather than fill
    memory), each line fed to an ``SSEDecoder``. One call per piece the body brings, not an
    async generator per line and per event: a streamed reply is an event or two a
    network read, and each generator step cost some microseconds of each."""

    def __init__(self) -> None:
        self._decoder = SSEDecoder()
        self._line = bytearray()  # the unfinished line the last piece ended in
        self._after_cr = False  # the last piece ended in CR: a LF opening the next ends no line

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """The events the lines ``chunk`` completes."""
        events: list[ServerSentEvent] = []
        if not chunk:
            return events
        start = 1 if self._after_cr and chunk.startswith(b"\n") else 0
        if not self._line and b"\r" not in chunk and len(chunk) <= LINE_LIMIT:
            # The common piece, whole lines ended by LF: split in C, not by the regex (with
            # the tuple and the one-line data, 5.9 µs an event -> 1.9).
            *lines, rest = chunk[start:].split(b"\n")
            for line in lines:
                if (event := self._decoder.feed(line.decode("utf-8", "replace"))) is not None:
                    events.append(event)
            self._line += rest
            self._after_cr = False
            return events
        for match in _LINE_BREAK.finditer(chunk, start):
            line = chunk[start : match.start()]
            if self._line:
                line, self._line = bytes(self._line + _within_limit(self._line, line)), bytearray()
            elif len(line) > LINE_LIMIT:
                _within_limit(self._line, line)
            if (event := self._decoder.feed(line.decode("utf-8", "replace"))) is not None:
                events.append(event)
            start = match.end()
        self._line += _within_limit(self._line, chunk[start:])
        self._after_cr = chunk.endswith(b"\r")
        return events

    def end(self) -> list[ServerSentEvent]:
        """The last event, when the body ends inside it. The spec drops it; some
        OpenAI-compatible servers close without the final blank line, and it matters."""
        events: list[ServerSentEvent] = []
        if self._line:
            line, self._line = self._line, bytearray()
            if (event := self._decoder.feed(line.decode("utf-8", "replace"))) is not None:
                events.append(event)
        if (event := self._decoder.flush()) is not None:
            events.append(event)
        return events


def _within_limit(line: bytearray, more: bytes) -> bytes:
    if len(line) + len(more) > LINE_LIMIT:
        raise over_limit(f"a line longer than {size(LINE_LIMIT)}, past tether's line limit")
    return more


async def aiter_sse(body: AsyncIterable[bytes]) -> AsyncIterator[ServerSentEvent]:
    """The events of a streamed response's body, read in bounded pieces (``body.pieces``:
    httpx's own ``aiter_lines`` would buffer a line without end)."""
    stream = EventStream()
    async for chunk in body:
        for event in stream.feed(chunk):
            yield event
    for event in stream.end():
        yield event


def json_object(data: str) -> dict[str, Any]:
    """An event's data as a JSON object, or ``BrokenStream`` saying what came instead.

    Read by pydantic-core's parser (1.5 µs a chunk of a streamed reply, where ``json.loads``
    takes 4.7); what it refuses is read again by ``json.loads``, which takes a little
    more (an escaped lone surrogate, nesting past 200), so both read the same."""
    try:
        value = from_json(data)
    except ValueError:
        try:
            value = json.loads(data)
        except (ValueError, RecursionError):  # nested past the decoder's stack: unreadable
            raise unreadable(data) from None
    if not isinstance(value, dict):
        raise unreadable(data)
    return value
