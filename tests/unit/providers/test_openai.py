from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import pytest
from pydantic import SecretStr

from tests.support.provider_stub import ProviderStub, hang, text, tool_calls
from tether.config import ProviderSettings
from tether.models import (
    AssistantMessage,
    Reply,
    ToolCall,
    ToolMessage,
    ToolResult,
    Usage,
    UserMessage,
)
from tether.providers import make_provider
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import ChatRequest, StreamEvent, TextDelta, ToolSpec
from tether.providers.openai import OpenAIProvider

KEY = "sk-test-0123456789abcdef"
ASK = ChatRequest(system="You are terse.", messages=(UserMessage(content="hi"),))


def settings_for(stub: ProviderStub, **overrides: object) -> ProviderSettings:
    values: dict[str, object] = {
        "base_url": stub.url,
        "model": "stub-model",
        "api_key": SecretStr(KEY),
        "retry_base_s": 0.01,
        "max_retries": 2,
    }
    return ProviderSettings.model_validate(values | overrides)


@pytest.fixture
async def provider(stub: ProviderStub) -> AsyncIterator[OpenAIProvider]:
    opened = OpenAIProvider(settings_for(stub))
    yield opened
    await opened.aclose()


async def collect(provider: OpenAIProvider, request: ChatRequest = ASK) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


async def test_text_streams_as_deltas_then_one_reply(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    stub.script(text("Hello, world", chunk_size=5))
    events = await collect(provider)
    assert events[:-1] == [TextDelta(text="Hello"), TextDelta(text=", wor"), TextDelta(text="ld")]
    reply = events[-1]
    assert isinstance(reply, Reply)
    assert reply.text == "Hello, world"
    assert reply.tool_calls == ()


async def test_usage_is_read_from_the_final_chunk(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    stub.script(text("Hello, world"))
    reply = (await collect(provider))[-1]
    assert isinstance(reply, Reply)
    # The stub counts a token per 4 bytes of the body, however the client spaced its JSON.
    tight = len(json.dumps(stub.requests[0], separators=(",", ":")).encode()) // 4
    loose = len(json.dumps(stub.requests[0]).encode()) // 4
    assert reply.usage is not None
    assert tight <= reply.usage.input_tokens <= loose
    assert reply.usage.output_tokens == 3


async def test_two_tool_calls_are_assembled_from_their_chunks(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    stub.script(
        tool_calls(
            ("read_file", {"path": "src/app.py", "start": 10}),
            ("grep", {"pattern": "def main"}),
            text="Looking.",
        )
    )
    events = await collect(provider)
    assert events[0] == TextDelta(text="Look")
    reply = events[-1]
    assert isinstance(reply, Reply)
    assert reply.text == "Looking."
    assert reply.tool_calls == (
        ToolCall(id="call_1", name="read_file", arguments='{"path": "src/app.py", "start": 10}'),
        ToolCall(id="call_2", name="grep", arguments='{"pattern": "def main"}'),
    )


async def test_call_ids_stay_unique_across_replies(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    stub.script(tool_calls(("a", {})), tool_calls(("b", {})))
    first, second = (await collect(provider))[-1], (await collect(provider))[-1]
    assert isinstance(first, Reply) and isinstance(second, Reply)
    assert [first.tool_calls[0].id, second.tool_calls[0].id] == ["call_1", "call_2"]


async def test_malformed_arguments_pass_through_raw(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    stub.script(tool_calls(("edit", '{"path": "a.py", "text": unquoted')))
    reply = (await collect(provider))[-1]
    assert isinstance(reply, Reply)
    assert reply.tool_calls[0].arguments == '{"path": "a.py", "text": unquoted'


async def test_request_carries_model_stream_options_and_tools(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    stub.script(text("ok"))
    await collect(
        provider,
        ASK.model_copy(
            update={
                "tools": (
                    ToolSpec(name="read_file", description="Read a file.", parameters=schema),
                )
            }
        ),
    )
    body = stub.requests[0]
    assert body["model"] == "stub-model"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"] == [
        {
            "type": "function",
            "function": {"name": "read_file", "description": "Read a file.", "parameters": schema},
        }
    ]


async def test_tools_are_omitted_when_there_are_none(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    stub.script(text("ok"))
    await collect(provider)
    assert "tools" not in stub.requests[0]


async def test_transcript_is_converted_to_openai_messages(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    call = ToolCall(id="call_9", name="read_file", arguments='{"path": "a.py"}')
    result = ToolResult(
        call_id="call_9",
        tool="read_file",
        status="ok",
        content="print(1)",
        started_at=datetime.now(UTC),
    )
    transcript = (
        UserMessage(content="read a.py"),
        AssistantMessage(content="", tool_calls=(call,)),
        ToolMessage(result=result),
        AssistantMessage(content="It prints 1."),
        UserMessage(content="thanks"),
    )
    stub.script(text("ok"))
    await collect(provider, ChatRequest(system="Be brief.", messages=transcript))
    assert stub.requests[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "read a.py"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_9",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_9", "content": "print(1)"},
        {"role": "assistant", "content": "It prints 1."},
        {"role": "user", "content": "thanks"},
    ]


async def test_key_is_sent_only_as_a_bearer_header(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    stub.script(text("ok"))
    await collect(provider)
    assert stub.headers[0]["Authorization"] == f"Bearer {KEY}"
    assert KEY not in json.dumps(stub.requests[0])
    others = {k: v for k, v in stub.headers[0].items() if k != "authorization"}
    assert KEY not in json.dumps(others)


async def test_no_authorization_header_without_a_key(stub: ProviderStub) -> None:
    provider = OpenAIProvider(settings_for(stub, api_key=None))
    stub.script(text("ok"))
    await collect(provider)
    await provider.aclose()
    assert "authorization" not in stub.headers[0]


async def test_abandoning_a_stream_releases_it_promptly(
    stub: ProviderStub, provider: OpenAIProvider
) -> None:
    stub.script(hang(5))
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(collect(provider), timeout=0.3)
    assert time.monotonic() - started < 2
    assert len(stub.requests) == 1


async def test_make_provider_picks_the_provider_of_the_kind(stub: ProviderStub) -> None:
    provider = make_provider(settings_for(stub))
    assert isinstance(provider, OpenAIProvider)
    await provider.aclose()
    anthropic = make_provider(ProviderSettings(kind="anthropic"))
    assert isinstance(anthropic, AnthropicProvider)
    await anthropic.aclose()


def _client_answering(content_type: str, body: bytes) -> httpx.AsyncClient:
    """For wire shapes the stub does not speak: answers every request with ``body``."""

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": content_type}, content=body)

    return httpx.AsyncClient(transport=httpx.MockTransport(answer))


async def _collect_from(client: httpx.AsyncClient) -> list[StreamEvent]:
    config = ProviderSettings(base_url="http://provider.test/v1", model="m", retry_base_s=0)
    provider = OpenAIProvider(config, client)
    try:
        return [event async for event in provider.stream(ASK)]
    finally:
        await client.aclose()


async def test_a_server_that_ignores_stream_is_read_whole() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
    completion = {
        "object": "chat.completion",
        "choices": [{"message": {"role": "assistant", "content": "Hi", "tool_calls": [call]}}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3},
    }
    events = await _collect_from(
        _client_answering("application/json", json.dumps(completion).encode())
    )
    assert events == [
        TextDelta(text="Hi"),
        Reply(
            text="Hi",
            tool_calls=(ToolCall(id="c1", name="grep", arguments="{}"),),
            usage=Usage(input_tokens=12, output_tokens=3),
        ),
    ]


async def test_calls_without_an_index_are_told_apart_by_their_ids() -> None:
    def chunk(call: dict[str, object]) -> str:
        return "data: " + json.dumps({"choices": [{"delta": {"tool_calls": [call]}}]}) + "\n\n"

    body = "".join(
        [
            chunk({"id": "a", "function": {"name": "read_file", "arguments": '{"path":'}}),
            chunk({"function": {"arguments": ' "x"}'}}),
            chunk({"id": "b", "function": {"name": "grep", "arguments": {"pattern": "y"}}}),
            "data: [DONE]\n\n",
        ]
    )
    events = await _collect_from(_client_answering("text/event-stream", body.encode()))
    assert events == [
        Reply(
            tool_calls=(
                ToolCall(id="a", name="read_file", arguments='{"path": "x"}'),
                ToolCall(id="b", name="grep", arguments='{"pattern": "y"}'),
            )
        )
    ]
