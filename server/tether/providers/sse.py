"""Server-Sent Events, parsed incrementally from a stream of lines.

Both the OpenAI and the Anthropic streaming APIs speak SSE; the parser knows
nothing of either. Sentinels such as OpenAI's ``[DONE]`` are the caller's business.

Stricter than the spec in one way: a line that is no SSE field at all (an HTML
error page, llama.cpp's ``error: {...}``) is reported, where the spec would skip it
and leave the caller waiting for a reply that never comes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterable, AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from tether.providers.failures import BrokenStream, unreadable

FIELDS = frozenset({"data", "event", "id", "retry"})


@dataclass(frozen=True)
class ServerSentEvent:
    event: str = "message"
    data: str = ""
    id: str | None = None


class SSEDecoder:
    """Feed lines (without their line ending) one at a time; get an event at each blank line."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
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
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\x00" not in value:
            self._id = value
        elif name not in FIELDS:
            raise BrokenStream(f"sent a line that is not a server-sent event: {line[:200]!r}")
        return None

    def flush(self) -> ServerSentEvent | None:
        """The event gathered so far, if it has any data; the decoder starts afresh."""
        if not self._data:
            self._event = ""
            return None
        event = ServerSentEvent(self._event or "message", "\n".join(self._data), self._id)
        self._event, self._data = "", []
        return event


async def iter_events(lines: AsyncIterable[str]) -> AsyncIterator[ServerSentEvent]:
    decoder = SSEDecoder()
    async for line in lines:
        if (event := decoder.feed(line)) is not None:
            yield event
    # The spec drops an event the stream ends inside of; some OpenAI-compatible
    # servers close without the final blank line, and their last event matters.
    if (event := decoder.flush()) is not None:
        yield event


def aiter_sse(response: httpx.Response) -> AsyncIterator[ServerSentEvent]:
    """The events of a streamed response (httpx splits lines on CR, LF and CRLF alike)."""
    return iter_events(response.aiter_lines())


def json_object(data: str) -> dict[str, Any]:
    """An event's data as a JSON object, or ``BrokenStream`` saying what came instead."""
    try:
        value = json.loads(data)
    except ValueError:
        raise unreadable(data) from None
    if not isinstance(value, dict):
        raise unreadable(data)
    return value
