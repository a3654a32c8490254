"""The Anthropic Messages provider against a loopback stub of the API."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from pydantic import SecretStr

from tests.support.anthropic_stub import AnthropicStub, text, tool_calls
from tether.agent.loop import BATCH_NUDGE
from tether.config import ProviderSettings
from tether.models import (
    AssistantMessage,
    Message,
    Reply,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolStatus,
    UserMessage,
)
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import ChatRequest, StreamEvent, TextDelta, ToolSpec

KEY = "sk-ant-test-7c1e4a9d2f6b0e35"
ASK = ChatRequest(system="You are terse.", messages=(UserMessage(content="hi"),))


@pytest.fixture
def stub() -> Iterator[AnthropicStub]:
    with AnthropicStub() as running:
        yield running


def settings_for(stub: AnthropicStub, **overrides: object) -> ProviderSettings:
    values: dict[str, object] = {
        "kind": "anthropic",
        "base_url": stub.url,
        "model": "claude-stub",
        "api_key": SecretStr(KEY),
        "retry_base_s": 0.01,
        "max_retries": 2,
    }
    return ProviderSettings.model_validate(values | overrides)


@pytest.fixture
async def provider(stub: AnthropicStub) -> AsyncIterator[AnthropicProvider]:
    opened = AnthropicProvider(settings_for(stub))
    yield opened
    await opened.aclose()


async def collect(provider: AnthropicProvider, request: ChatRequest = ASK) -> list[StreamEvent]:
    return [event async for event in provider.stream(request)]


async def wire_messages(stub: AnthropicStub, *transcript: Message) -> list[dict[str, Any]]:
    """The ``messages`` the API was sent for ``transcript``."""
    provider = AnthropicProvider(settings_for(stub))
    stub.script(text("ok"))
    await collect(provider, ChatRequest(system="", messages=transcript))
    await provider.aclose()
    messages = stub.requests[-1]["messages"]
    assert isinstance(messages, list)
    return messages


def result(call_id: str, content: str, status: ToolStatus = "ok") -> ToolMessage:
    return ToolMessage(
        result=ToolResult(call_id=call_id, tool="read_file", status=status, content=content)
    )


async def test_text_streams_as_deltas_then_one_reply_with_usage(
    stub: AnthropicStub, provider: AnthropicProvider
) -> None:
    stub.script(text("Hello, world", chunk_size=5))
    events = await collect(provider)
    assert events[:-1] == [TextDelta(text="Hello"), TextDelta(text=", wor"), TextDelta(text="ld")]
    reply = events[-1]
    assert isinstance(reply, Reply) and reply.text == "Hello, world" and reply.tool_calls == ()
    # message_start counts the input (a token per 4 bytes of body); message_delta the output.
    tight = len(json.dumps(stub.requests[0], separators=(",", ":")).encode()) // 4
    assert reply.usage is not None
    assert tight <= reply.usage.input_tokens <= len(json.dumps(stub.requests[0]).encode()) // 4
    assert reply.usage.output_tokens == 3


async def test_tool_use_blocks_become_calls_with_their_assembled_json(
    stub: AnthropicStub, provider: AnthropicProvider
) -> None:
    stub.script(
        tool_calls(
            ("read_file", {"path": "src/app.py", "start": 10}), ("git_status", {}), text="Hm."
        )
    )
    events = await collect(provider)
    assert events[0] == TextDelta(text="Hm.")
    reply = events[-1]
    assert isinstance(reply, Reply) and reply.text == "Hm."
    assert reply.tool_calls == (
        ToolCall(id="toolu_1", name="read_file", arguments='{"path": "src/app.py", "start": 10}'),
        ToolCall(id="toolu_2", name="git_status", arguments="{}"),
    )


async def test_a_call_with_no_input_deltas_has_empty_object_arguments(
    stub: AnthropicStub, provider: AnthropicProvider
) -> None:
    stub.script(tool_calls(("git_status", "")))
    reply = (await collect(provider))[-1]
    assert isinstance(reply, Reply)
    assert reply.tool_calls == (ToolCall(id="toolu_1", name="git_status", arguments="{}"),)


async def test_request_has_the_messages_api_shape_and_headers(
    stub: AnthropicStub, provider: AnthropicProvider
) -> None:
    schema = {"type": "object", "properties": {"path": {"type": "string"}}}
    spec = ToolSpec(name="read_file", description="Read a file.", parameters=schema)
    stub.script(text("ok"))
    await collect(provider, ASK.model_copy(update={"tools": (spec,)}))
    assert stub.requests[0] == {
        "model": "claude-stub",
        "max_tokens": 8192,
        "messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        "stream": True,
        "system": "You are terse.",
        "tools": [{"name": "read_file", "description": "Read a file.", "input_schema": schema}],
    }
    headers = stub.headers[0]
    assert headers["x-api-key"] == KEY and headers["anthropic-version"] == "2023-06-01"
    assert headers["content-type"] == "application/json"
    assert "authorization" not in headers
    assert KEY not in json.dumps(stub.requests[0])


async def test_max_tokens_comes_from_the_settings_and_no_key_sends_no_header(
    stub: AnthropicStub,
) -> None:
    provider = AnthropicProvider(settings_for(stub, max_tokens=1000, api_key=None))
    stub.script(text("ok"))
    await collect(provider, ChatRequest(system="", messages=ASK.messages))
    await provider.aclose()
    assert stub.requests[0]["max_tokens"] == 1000
    assert "system" not in stub.requests[0] and "tools" not in stub.requests[0]
    assert "x-api-key" not in stub.headers[0]


async def test_a_base_url_given_with_v1_is_not_doubled(stub: AnthropicStub) -> None:
    provider = AnthropicProvider(settings_for(stub, base_url=f"{stub.url}/v1/"))
    stub.script(text("ok"))
    events = await collect(provider)
    await provider.aclose()
    assert isinstance(events[-1], Reply) and events[-1].text == "ok"


async def test_results_of_one_reply_are_one_user_turn_in_call_order_then_the_nudge(
    stub: AnthropicStub,
) -> None:
    calls = (
        ToolCall(id="toolu_a", name="read_file", arguments='{"path": "a.py"}'),
        ToolCall(id="toolu_b", name="read_file", arguments='{"path": "b.py"}'),
    )
    messages = await wire_messages(
        stub,
        UserMessage(content="read both"),
        AssistantMessage(content="Reading.", tool_calls=calls),
        # Stored as they finished: b first.
        result("toolu_b", "no such file", status="error"),
        result("toolu_a", "print(1)"),
        BATCH_NUDGE,
    )
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "read both"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Reading."},
                {
                    "type": "tool_use",
                    "id": "toolu_a",
                    "name": "read_file",
                    "input": {"path": "a.py"},
                },
                {
                    "type": "tool_use",
                    "id": "toolu_b",
                    "name": "read_file",
                    "input": {"path": "b.py"},
                },
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_a", "content": "print(1)"},
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_b",
                    "content": "no such file",
                    "is_error": True,
                },
                {"type": "text", "text": "batch call"},
            ],
        },
    ]


async def test_roles_alternate_even_when_the_transcript_does_not(stub: AnthropicStub) -> None:
    call = ToolCall(id="toolu_x", name="edit_file", arguments='{"path": "a.py", oops')
    messages = await wire_messages(
        stub,
        UserMessage(content="one"),
        AssistantMessage(content=""),  # an empty reply: the API refuses an empty turn
        UserMessage(content="two"),
        AssistantMessage(tool_calls=(call,)),
        result("toolu_x", "arguments are not valid JSON", status="error"),
        UserMessage(content="three"),
    )
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[0]["content"] == [
        {"type": "text", "text": "one"},
        {"type": "text", "text": "two"},
    ]
    # Arguments that never parsed are sent as an empty object: the API takes only objects.
    assert messages[1]["content"] == [
        {"type": "tool_use", "id": "toolu_x", "name": "edit_file", "input": {}}
    ]
    assert [block["type"] for block in messages[2]["content"]] == ["tool_result", "text"]
