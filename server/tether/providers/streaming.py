"""What the HTTP providers share: one client, one POST per reply sent through the
retries, and a reply gathered from the pieces its stream brought, within limits.

A provider file says only what its API says differently: the URL, the headers,
the body, and how to read the stream (``read_reply``).
"""

from __future__ import annotations

import io
import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import httpx

from tether.config import ProviderSettings
from tether.errors import ConfigError
from tether.models import MAX_TOKENS, Reply, ToolCall, Usage
from tether.outbound import keep_secret
from tether.providers.base import ChatRequest, StreamEvent, TextDelta
from tether.providers.body import finished, pieces
from tether.providers.encoded import body_json
from tether.providers.failures import cut_off, missing_model, over_limit, unexpected_shape
from tether.providers.retry import stream_with_retries

REPLY_LIMIT = 16 * 2**20  # characters of text, tool call ids, names and arguments in one reply
CALL_LIMIT = 1024  # tool calls in one reply


class HTTPProvider(ABC):
    def __init__(self, settings: ProviderSettings, client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        keep_secret(self.api_key())  # whatever leaves the process from now on is redacted
        self._timeout = httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s)
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(timeout=self._timeout)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        if not self.settings.model:
            raise ConfigError(missing_model(self.settings))
        http_request = self._client.build_request(
            "POST",
            self._endpoint,
            content=self.request_body(request, self.settings.model),
            headers={
                "Accept": "text/event-stream",
                "Content-Type": "application/json",
                **self.headers(),
            },
            # Per request, so the settings' timeouts hold for a client passed in too.
            timeout=self._timeout,
        )
        async for event in stream_with_retries(
            self._client, http_request, self._read, self.settings
        ):
            yield event

    @cached_property
    def _endpoint(self) -> httpx.URL:
        # Parsed once: a URL given as text is parsed again by every request (30 µs).
        return httpx.URL(self.url())

    async def _read(self, response: httpx.Response) -> AsyncGenerator[StreamEvent, None]:
        # Readers take each chunk at its word; one of a shape its API never sends (a
        # string where an object belongs, a number no integer holds) is reported here,
        # once, not crashed on.
        async with aclosing(pieces(response)) as body:
            try:
                async with aclosing(self.read_reply(response, body)) as events:
                    async for event in events:
                        if not isinstance(event, TextDelta):  # the whole reply, last
                            await finished(body)  # its connection serves the next request
                        yield event
            except (LookupError, TypeError, AttributeError, ValueError, ArithmeticError) as exc:
                raise unexpected_shape(exc) from exc

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    def api_key(self) -> str:
        return self.settings.api_key.get_secret_value() if self.settings.api_key else ""

    @abstractmethod
    def url(self) -> str: ...

    @abstractmethod
    def headers(self) -> dict[str, str]: ...

    def request_body(self, request: ChatRequest, model: str) -> bytes:
        return body_json(self.body(request, model), self.messages(request))

    @abstractmethod
    def body(self, request: ChatRequest, model: str) -> dict[str, Any]:
        """The body's fields, but for its messages."""

    @abstractmethod
    def messages(self, request: ChatRequest) -> list[str]:
        """The JSON text of each of the body's messages (``encoded.Encodings``)."""

    @abstractmethod
    def read_reply(
        self, response: httpx.Response, body: AsyncIterator[bytes]
    ) -> AsyncGenerator[StreamEvent, None]:
        """Text deltas as they come, then the whole reply; ``BrokenStream`` if it breaks.
        ``body``: the response's body in pieces (``body.pieces``), read from here."""

    @abstractmethod
    def cut_off_hint(self) -> str:
        """What to raise when the token limit cuts a reply off."""


def tokens(value: object) -> int | None:
    """A token count as a provider reports it, or None when it is none tether can keep:
    negative, fractional, not a number, or past ``MAX_TOKENS``. Usage only
    informs (the stats, when to compact), so a reply is never refused over it."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) < 20:
        value = int(value)  # digits in a string, as a few servers send them
    if isinstance(value, float) and value.is_integer():  # never inf or nan
        value = int(value)
    if not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        return None
    return value


class Gathered:
    """A reply as its stream brings it: the text, and the calls by their index.

    Everything counts against ``REPLY_LIMIT`` before it is kept, and a reply past it (or
    past ``CALL_LIMIT`` calls) is stopped there: an endless stream costs at most the limit.
    Pieces go into buffers, not lists: a million two-character deltas in a list would
    cost some thirty times their text.
    """

    def __init__(self) -> None:
        self.calls: dict[int, PartialCall] = {}
        self._text = io.StringIO()
        self._budget = Budget()

    def text(self, piece: str) -> TextDelta:
        """Keep ``piece`` of the answer; the delta to show for it."""
        self._text.write(self._budget.count(piece))
        return TextDelta(text=piece)

    def call(self, index: int) -> PartialCall:
        """The call at ``index``, opened by the first delta that names it."""
        if index not in self.calls:
            if len(self.calls) >= CALL_LIMIT:
                raise over_limit(f"more than {CALL_LIMIT:,} tool calls, past tether's call limit")
            self.calls[index] = PartialCall(self._budget)
        return self.calls[index]

    def reply(self, provider: HTTPProvider, usage: Usage | None, *, cut: bool) -> Reply:
        """The finished reply; ``cut`` when the token limit ended it.

        A cut-off reply with calls is refused: the last call's arguments are not whole,
        and a call must never run on half its arguments. Cut-off text is kept as it is.
        """
        calls = [self.calls[index] for index in sorted(self.calls)]
        if cut and calls:
            raise cut_off(calls[-1].name, provider.cut_off_hint())
        text = self._text.getvalue()
        return Reply(text=text, tool_calls=tuple(c.done() for c in calls), usage=usage)


class Budget:
    """What one reply has brought so far, against ``REPLY_LIMIT``. Shared by the reply
    and its calls, and holding neither: no cycle keeps a failed reply's text alive."""

    def __init__(self) -> None:
        self.size = 0

    def count(self, piece: str) -> str:
        self.size += len(piece)
        if self.size > REPLY_LIMIT:
            raise over_limit(
                f"a reply of more than {REPLY_LIMIT:,} characters (text and tool calls), "
                "past tether's reply limit"
            )
        return piece


@dataclass
class PartialCall:
    """A tool call whose id and name come first and whose arguments arrive in pieces."""

    budget: Budget
    id: str = ""
    name: str = ""
    _arguments: io.StringIO = field(default_factory=io.StringIO)

    def named(self, call_id: object, name: object) -> PartialCall:
        """Its id and name, each taken from the first delta that carries one."""
        if not self.id and call_id:
            self.id = self.budget.count(str(call_id))
        if not self.name and name:
            self.name = self.budget.count(str(name))
        return self

    def add(self, arguments: str) -> None:
        self._arguments.write(self.budget.count(arguments))

    def done(self) -> ToolCall:
        # The id ties each result to its call; a server that sends none gets one made up.
        call_id = self.id or f"call_{uuid.uuid4().hex[:24]}"
        return ToolCall(id=call_id, name=self.name, arguments=self._arguments.getvalue() or "{}")
