"""A provider against a real loopback stub of its API, for each wire format: the
``wire`` fixture (``conftest.py``) gives one ``Wire`` per API where a fault applies
to both."""

from __future__ import annotations

import socket
from dataclasses import dataclass
from types import ModuleType

import pytest
from pydantic import SecretStr

from tests.support.loopback import LoopbackStub
from tether.config import ProviderSettings
from tether.errors import ProviderError
from tether.models import Reply, UserMessage
from tether.providers import make_provider
from tether.providers.base import ChatRequest, StreamEvent, TextDelta

# Registered for redaction by every provider made with it, for the rest of the run: its
# first and last eight characters are its own, shared with no other test's key.
KEY = "sk-wire-faults-5e8b1d4a7c2f9e6b"
ASK = ChatRequest(system="", messages=(UserMessage(content="hi"),))


@dataclass
class Wire:
    kind: str
    stub: LoopbackStub
    api: ModuleType  # the stub's module: text(), error(), drop_after(), ...
    path: str  # where the provider posts, after the base URL
    before_text: int  # events a streamed text sends before its first letter
    key_variable: str  # the vendor's own key variable, named beside TETHER_API_KEY
    cut_off_hint: str  # what to raise when the token limit cuts a call off

    @property
    def endpoint(self) -> str:
        return f"{self.stub.url}{self.path}"

    def settings(self, **overrides: object) -> ProviderSettings:
        values: dict[str, object] = {
            "kind": self.kind,
            "base_url": self.stub.url,
            "model": "stub-model",
            "api_key": SecretStr(KEY),
            "retry_base_s": 0.01,
            "max_retries": 2,
            "connect_timeout_s": 2,
        }
        return ProviderSettings.model_validate(values | overrides)

    async def collect(self, **overrides: object) -> list[StreamEvent]:
        provider = make_provider(self.settings(**overrides))
        try:
            return [event async for event in provider.stream(ASK)]
        finally:
            await provider.aclose()

    async def run(self, **overrides: object) -> tuple[list[StreamEvent], str]:
        """The events seen before the ProviderError, and its message."""
        provider = make_provider(self.settings(**overrides))
        seen: list[StreamEvent] = []
        with pytest.raises(ProviderError) as caught:
            async for event in provider.stream(ASK):
                seen.append(event)
        await provider.aclose()
        assert not any(isinstance(event, Reply) for event in seen)
        message = str(caught.value)
        assert KEY not in message
        return seen, message


def texts(events: list[StreamEvent]) -> tuple[list[str], str]:
    """The deltas' texts, and the text of the reply that must end the events."""
    *deltas, reply = events
    assert isinstance(reply, Reply) and all(isinstance(d, TextDelta) for d in deltas)
    return [d.text for d in deltas if isinstance(d, TextDelta)], reply.text


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
