"""Streams that are whole HTTP answers but not whole replies, for each API: ended
before their terminator, or made of JSON of a shape the API never sends."""

from __future__ import annotations

import json

import httpx
import pytest

from tether.config import ProviderSettings
from tether.errors import ProviderError
from tether.models import Reply, UserMessage
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import ChatRequest, StreamEvent, TextDelta
from tether.providers.openai import OpenAIProvider

ASK = ChatRequest(system="", messages=(UserMessage(content="hi"),))
PROVIDERS = {"openai": OpenAIProvider, "anthropic": AnthropicProvider}
UNFINISHED = {
    "openai": b'data: {"choices":[{"delta":{"role":"assistant","content":""}}]}\n\n',
    "anthropic": b'event: message_start\ndata: {"type":"message_start","message":{}}\n\n',
}


async def answered(kind: str, body: bytes) -> tuple[list[StreamEvent | Exception], int]:
    """What the provider makes of a 200 stream of ``body`` (sent afresh on every retry)."""
    sent: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        sent.append(request)
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body)

    config = ProviderSettings.model_validate(
        {"kind": kind, "base_url": "http://p.test", "model": "m", "retry_base_s": 0}
    )
    events: list[StreamEvent | Exception] = []
    async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
        try:
            events += [event async for event in PROVIDERS[kind](config, client).stream(ASK)]
        except ProviderError as exc:
            events.append(exc)
    return events, len(sent)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_a_stream_that_ends_before_its_terminator_is_retried_then_reported(
    kind: str,
) -> None:
    events, sent = await answered(kind, UNFINISHED[kind])
    assert sent == 4 and len(events) == 1
    assert "ended the stream before the reply was complete (tried 4 times)" in str(events[0])


@pytest.mark.parametrize("finish", ["stop", "length"])
async def test_an_openai_finish_reason_ends_a_reply_without_done_and_cut_text_is_kept(
    finish: str,
) -> None:
    chunk = json.dumps({"choices": [{"delta": {"content": "Hi"}, "finish_reason": finish}]})
    events, sent = await answered("openai", f"data: {chunk}\n\n".encode())
    assert events == [TextDelta(text="Hi"), Reply(text="Hi")] and sent == 1


ODD_SHAPE = {
    "openai": b'data: {"choices": "x"}\n\n',
    "anthropic": b'event: content_block_start\ndata: {"content_block": 7}\n\n',
}


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
async def test_json_of_a_shape_the_api_never_sends_is_an_error_not_a_crash(kind: str) -> None:
    events, sent = await answered(kind, ODD_SHAPE[kind])
    assert sent == 1 and len(events) == 1 and isinstance(events[0], ProviderError)
    assert "sent a chunk of a shape tether does not know" in str(events[0])
