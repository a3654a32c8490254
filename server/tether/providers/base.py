"""The ``Provider`` seam: stream one assistant reply for a transcript."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, NamedTuple, Protocol

from pydantic import SkipValidation

from tether.models import Frozen, Message, Reply


class ToolSpec(Frozen):
    """A tool as the model is told of it: name, description, JSON Schema of arguments."""

    name: str
    description: str
    parameters: dict[str, Any]


class ChatRequest(Frozen):
    system: str
    # Models already, loaded from the store or made by the loop: checking each again (the
    # union, by isinstance through pydantic's metaclass) cost 2 ms a round at 5,000.
    messages: SkipValidation[tuple[Message, ...]]
    tools: tuple[ToolSpec, ...] = ()


class TextDelta(NamedTuple):
    """A piece of the reply's text as it streams in. A tuple: one is made for each piece
    of every reply, and a model costs three times as much to make and to recognise."""

    text: str


StreamEvent = TextDelta | Reply


class Provider(Protocol):
    def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        """Yield text deltas as they arrive, then exactly one complete ``Reply``.

        Retries what is retryable before anything was yielded; raises
        ``ProviderError`` with a message a person can act on otherwise, and
        ``ConfigError`` before any request when the settings cannot work (no model).
        """
        ...

    async def aclose(self) -> None: ...
