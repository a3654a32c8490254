"""What the HTTP providers share: one client, one POST per reply sent through the
retries, and a reply assembled from the pieces its stream brought.

A provider file says only what its API says differently: the URL, the headers,
the body, and how to read the stream (``read_reply``).
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

import httpx

from tether.config import ProviderSettings
from tether.errors import ConfigError
from tether.models import Reply, ToolCall, Usage
from tether.providers.base import ChatRequest, StreamEvent
from tether.providers.failures import cut_off, missing_model, unexpected_shape
from tether.providers.retry import stream_with_retries


class HTTPProvider(ABC):
    def __init__(self, settings: ProviderSettings, client: httpx.AsyncClient | None = None) -> None:
        self.settings = settings
        self._timeout = httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s)
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(timeout=self._timeout)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        if not self.settings.model:
            raise ConfigError(missing_model(self.settings))
        http_request = self._client.build_request(
            "POST",
            self.url(),
            json=self.body(request, self.settings.model),
            headers={"Accept": "text/event-stream", **self.headers()},
            # Per request, so the settings' timeouts hold for a client passed in too.
            timeout=self._timeout,
        )
        async for event in stream_with_retries(
            self._client, http_request, self._read, self.settings
        ):
            yield event

    async def _read(self, response: httpx.Response) -> AsyncGenerator[StreamEvent, None]:
        # Readers take each chunk at its word; one of a shape its API never sends (a
        # string where an object belongs) is reported here, once, not crashed on.
        try:
            async with aclosing(self.read_reply(response)) as events:
                async for event in events:
                    yield event
        except (LookupError, TypeError, AttributeError, ValueError) as exc:
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

    @abstractmethod
    def body(self, request: ChatRequest, model: str) -> dict[str, Any]: ...

    @abstractmethod
    def read_reply(self, response: httpx.Response) -> AsyncGenerator[StreamEvent, None]:
        """Text deltas as they come, then the whole reply; ``BrokenStream`` if it breaks."""

    @abstractmethod
    def cut_off_hint(self) -> str:
        """What to raise when the token limit cuts a reply off."""


@dataclass
class PartialCall:
    """A tool call whose arguments arrive in pieces."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def done(self) -> ToolCall:
        # The id ties each result to its call; a server that sends none gets one made up.
        call_id = self.id or f"call_{uuid.uuid4().hex[:24]}"
        return ToolCall(id=call_id, name=self.name, arguments="".join(self.arguments) or "{}")


def assemble(
    provider: HTTPProvider,
    text: list[str],
    calls: list[PartialCall],
    usage: Usage | None,
    *,
    cut: bool,
) -> Reply:
    """The finished reply; ``cut`` when the token limit ended it.

    A cut-off reply with calls is refused: the last call's arguments are not whole,
    and a call must never run on half its arguments. Cut-off text is kept as it is.
    """
    if cut and calls:
        raise cut_off(calls[-1].name, provider.cut_off_hint())
    return Reply(text="".join(text), tool_calls=tuple(c.done() for c in calls), usage=usage)
