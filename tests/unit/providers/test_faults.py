"""Each way a provider fails, against a loopback stub of each API.

What holds for every fault: a broken stream never becomes a ``Reply``; what is
retryable is retried only while nothing was shown; the rest is a ``ProviderError``
that says what happened, in the provider's own words where it gave any.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType

import pytest
from pydantic import SecretStr

from tests.support import anthropic_stub, provider_stub
from tests.support.loopback import LoopbackStub
from tether.config import ProviderSettings
from tether.errors import ProviderError
from tether.models import Reply, UserMessage
from tether.providers import make_provider
from tether.providers.base import ChatRequest, StreamEvent, TextDelta

KEY = "sk-test-faults-0123456789abcdef"
ASK = ChatRequest(system="", messages=(UserMessage(content="hi"),))


@dataclass
class Wire:
    kind: str
    stub: LoopbackStub
    api: ModuleType  # the stub's module: text(), error(), drop_after(), ...
    path: str  # where the provider posts, after the base URL
    before_text: int  # events a streamed text sends before its first letter

    def settings(self, **overrides: object) -> ProviderSettings:
        values: dict[str, object] = {
            "kind": self.kind,
            "base_url": self.stub.url,
            "model": "stub-model",
            "api_key": SecretStr(KEY),
            "retry_base_s": 0.01,
            "max_retries": 2,
        }
        return ProviderSettings.model_validate(values | overrides)

    async def run(self, **overrides: object) -> tuple[list[StreamEvent], str]:
        """The events seen before the ProviderError, and its message."""
        return await fail(self.settings(**overrides))


@pytest.fixture(params=["openai", "anthropic"])
def wire(request: pytest.FixtureRequest) -> Iterator[Wire]:
    if request.param == "openai":
        with provider_stub.ProviderStub() as stub:
            yield Wire("openai", stub, provider_stub, "/chat/completions", before_text=1)
    else:
        with anthropic_stub.AnthropicStub() as stub:
            yield Wire("anthropic", stub, anthropic_stub, "/v1/messages", before_text=3)


async def collect(config: ProviderSettings) -> list[StreamEvent]:
    provider = make_provider(config)
    try:
        return [event async for event in provider.stream(ASK)]
    finally:
        await provider.aclose()


async def fail(config: ProviderSettings) -> tuple[list[StreamEvent], str]:
    provider = make_provider(config)
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as caught:
        async for event in provider.stream(ASK):
            seen.append(event)
    await provider.aclose()
    assert not any(isinstance(event, Reply) for event in seen)
    assert KEY not in str(caught.value)
    return seen, str(caught.value)


# -- retried -------------------------------------------------------------------


async def test_rate_limited_and_overloaded_are_retried_as_retry_after_says(wire: Wire) -> None:
    api = wire.api
    wire.stub.script(api.error(429, retry_after=0), api.error(529, retry_after=0), api.text("ok"))
    started = time.monotonic()
    events = await collect(wire.settings(retry_base_s=30))
    assert time.monotonic() - started < 2
    assert events == [TextDelta(text="ok"), events[-1]] and isinstance(events[-1], Reply)
    assert len(wire.stub.requests) == 3


@pytest.mark.parametrize("status", [500, 502, 503])
async def test_server_errors_are_retried(wire: Wire, status: int) -> None:
    wire.stub.script(wire.api.error(status), wire.api.text("ok"))
    assert isinstance((await collect(wire.settings()))[-1], Reply)
    assert len(wire.stub.requests) == 2


async def test_a_provider_that_stays_overloaded_fails_with_its_own_words(wire: Wire) -> None:
    wire.stub.script(*[wire.api.error(529, "Overloaded, try later", retry_after=0)] * 3)
    _, message = await wire.run()
    assert "HTTP 529" in message and "Overloaded, try later" in message
    assert f"{wire.stub.url}{wire.path}" in message and "after 3 attempts" in message


async def test_a_bad_request_is_not_retried(wire: Wire) -> None:
    wire.stub.script(wire.api.error(400, "max_tokens: must be at most 4096"))
    _, message = await wire.run()
    assert "HTTP 400" in message and "max_tokens: must be at most 4096" in message
    assert len(wire.stub.requests) == 1


async def test_a_connection_dropped_before_any_text_is_retried(wire: Wire) -> None:
    wire.stub.script(wire.api.drop_after(wire.before_text), wire.api.text("whole"))
    events = await collect(wire.settings())
    assert events[:-1] == [TextDelta(text="whol"), TextDelta(text="e")]
    assert isinstance(events[-1], Reply) and events[-1].text == "whole"
    assert len(wire.stub.requests) == 2


async def test_connection_refused_is_retried_then_names_the_url() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    for kind, path in (("openai", "/chat/completions"), ("anthropic", "/v1/messages")):
        config = ProviderSettings.model_validate(
            {"kind": kind, "base_url": url, "model": "m", "retry_base_s": 0.01}
        )
        _, message = await fail(config)
        assert f"could not reach the model provider at {url}{path} after 4 attempts" in message
        assert "TETHER_BASE_URL" in message


# -- not retried -----------------------------------------------------------------


async def test_a_connection_dropped_after_text_is_an_error_not_half_a_reply(wire: Wire) -> None:
    wire.stub.script(wire.api.drop_after(wire.before_text + 2), wire.api.text("never"))
    seen, message = await wire.run()
    assert seen == [TextDelta(text="p"), TextDelta(text="a")]
    assert "broke mid-reply" in message and "the partial reply was not kept" in message
    assert len(wire.stub.requests) == 1


async def test_a_chunk_that_is_not_json_is_a_clear_error(wire: Wire) -> None:
    wire.stub.script(wire.api.garbage(), wire.api.text("never"))
    seen, message = await wire.run()
    assert seen == [] and "sent an unreadable chunk" in message
    assert f"{wire.stub.url}{wire.path}" in message
    assert len(wire.stub.requests) == 1


async def test_a_body_that_is_not_server_sent_events_is_a_clear_error(wire: Wire) -> None:
    wire.stub.script(wire.api.garbage("<html><body>502 Bad Gateway</body></html>\n"))
    _, message = await wire.run()
    assert "not a server-sent event: '<html><body>502 Bad Gateway</body></html>'" in message


async def test_a_stream_that_stalls_hits_the_read_timeout(wire: Wire) -> None:
    wire.stub.script(wire.api.stall(5))
    started = time.monotonic()
    seen, message = await wire.run(timeout_s=0.2)
    assert time.monotonic() - started < 2
    assert seen == [TextDelta(text="stal")]
    assert "went 0.2 s without a word" in message and "timeout_s" in message
    assert message.endswith("the partial reply was not kept")
    assert len(wire.stub.requests) == 1


async def test_a_reply_cut_off_inside_a_tool_call_is_never_a_call(wire: Wire) -> None:
    wire.stub.script(wire.api.cut_off_in_tool_call(text="Editing."))
    seen, message = await wire.run()
    assert seen == [TextDelta(text="Edit"), TextDelta(text="ing.")]
    assert "cut the reply off at its token limit in the middle of a call to 'edit_file'" in message
    assert "nothing was run" in message
    if wire.kind == "anthropic":
        assert "raise tether.provider.max_tokens (now 8192)" in message
    assert len(wire.stub.requests) == 1


# -- Anthropic's error event -----------------------------------------------------


async def test_an_overloaded_error_event_before_any_text_is_retried() -> None:
    with anthropic_stub.AnthropicStub() as stub:
        stub.script(anthropic_stub.error_event(), anthropic_stub.text("ok"))
        events = await collect(Wire("anthropic", stub, anthropic_stub, "", 3).settings())
    assert events[0] == TextDelta(text="ok") and isinstance(events[-1], Reply)
    assert len(stub.requests) == 2


async def test_an_invalid_request_error_event_fails_at_once_with_its_message() -> None:
    with anthropic_stub.AnthropicStub() as stub:
        stub.script(anthropic_stub.error_event("invalid_request_error", "prompt is too long"))
        _, message = await Wire("anthropic", stub, anthropic_stub, "", 3).run()
    assert message.endswith("/v1/messages failed mid-reply: prompt is too long")
    assert len(stub.requests) == 1
