"""Each message's JSON encoded once, reused while it stays in the request, and a body
built from those pieces that is the body a fresh build would send."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from tether.config import ProviderSettings
from tether.models import (
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
)
from tether.providers.anthropic import AnthropicProvider
from tether.providers.base import ChatRequest, ToolSpec
from tether.providers.encoded import EncodedSpecs, Encodings, Text, body_json, dumps
from tether.providers.openai import OpenAIProvider
from tether.providers.streaming import HTTPProvider


def counted() -> tuple[Encodings[str], Counter[str]]:
    made: Counter[str] = Counter()

    def encode(message: Message) -> str:
        assert isinstance(message, UserMessage)
        made[message.content] += 1
        return dumps(message.content)

    return Encodings(encode), made


def test_a_message_is_encoded_once_while_it_stays_in_the_request() -> None:
    encodings, made = counted()
    a, b, c = (UserMessage(content=name) for name in "abc")
    assert encodings.of([a, b]) == ['"a"', '"b"']
    assert encodings.of([a, b, c]) == ['"a"', '"b"', '"c"']
    assert encodings.of([a, b, c]) == ['"a"', '"b"', '"c"']
    assert made == {"a": 1, "b": 1, "c": 1}


def test_a_request_that_starts_elsewhere_is_encoded_afresh() -> None:
    encodings, made = counted()
    a, b = UserMessage(content="a"), UserMessage(content="b")
    encodings.of([a, b])
    encodings.of([b])  # a compaction moved the start past a
    assert encodings.of([b, UserMessage(content="b")]) == ['"b"', '"b"']  # equal, not the same
    assert made == {"a": 1, "b": 3}


def test_sessions_that_run_at_once_each_keep_theirs_a_few_at_most() -> None:
    encodings, made = counted()
    sessions = [[UserMessage(content=f"{n}")] for n in range(5)]
    for _ in range(3):  # a round of each session in turn, each a message longer
        for n, messages in enumerate(sessions[:4]):
            messages.append(UserMessage(content=f"{n}"))
            encodings.of(messages)
    assert made == {f"{n}": 4 for n in range(4)}  # each message once
    encodings.of(sessions[4])  # a fifth session: the one left alone longest is let go
    encodings.of(sessions[0])
    assert made["0"] == 8 and made["1"] == 4


@pytest.mark.parametrize("fields", [{"model": "m", "stream": True}, {}])
def test_a_body_is_its_fields_and_then_its_messages(fields: dict[str, object]) -> None:
    body = body_json(fields, ['{"role":"user","content":"é\\n"}', "{}"])
    assert json.loads(body) == {**fields, "messages": [{"role": "user", "content": "é\n"}, {}]}
    assert "é".encode() in body  # UTF-8 as it is, as httpx sent it


def test_a_fields_made_text_goes_in_as_it_is() -> None:
    tools = Text('[{"name":"é"}]')
    body = body_json({"model": "m", "tools": tools, "stream": True}, ["{}"])
    assert json.loads(body) == {
        "model": "m",
        "stream": True,
        "tools": [{"name": "é"}],
        "messages": [{}],
    }
    assert json.loads(body_json({"tools": tools}, [])) == {"tools": [{"name": "é"}], "messages": []}


def specs(*names: str) -> tuple[ToolSpec, ...]:
    return tuple(
        ToolSpec(name=n, description=f"{n}!", parameters={"type": "object"}) for n in names
    )


def test_a_set_of_specs_is_encoded_once_while_it_is_kept() -> None:
    made: Counter[str] = Counter()

    def encode(spec: ToolSpec) -> dict[str, object]:
        made[spec.name] += 1
        return {"name": spec.name}

    kept = EncodedSpecs(encode, sets=2)
    first, second, third = specs("a", "b"), specs("c"), specs("d")
    assert json.loads(kept.of(first)) == [{"name": "a"}, {"name": "b"}]
    assert kept.of(tuple(first)) == kept.of([*first])  # the same specs, in a new sequence
    assert made == {"a": 1, "b": 1}
    assert json.loads(kept.of(specs("a", "b"))) == [{"name": "a"}, {"name": "b"}]
    assert made == {"a": 2, "b": 2}  # alike but not the same objects: encoded anew
    kept.of(second)
    kept.of(third)  # a third set: the one left alone longest is let go
    kept.of(second)
    assert made["c"] == 1 and made["d"] == 1
    kept.of(first[:1])
    assert made["a"] == 3


def rounds() -> list[tuple[Message, ...]]:
    """A session's requests round after round: each starts with the one before."""
    calls = (
        ToolCall(id="c1", name="fs-read", arguments='{"path": "a.py"}'),
        ToolCall(id="c2", name="fs-read", arguments='{"path": "b.py", "x": NaN'),
    )
    first: tuple[Message, ...] = (
        UserMessage(content="read both"),
        AssistantMessage(content="Reading.", tool_calls=calls),
        ToolMessage(result=ToolResult(call_id="c2", tool="fs-read", status="error", content="!")),
        ToolMessage(result=ToolResult(call_id="c1", tool="fs-read", status="ok", content="1")),
    )
    second = (*first, UserMessage(content="batch call"))
    third = (*first, AssistantMessage(content="Both read."), UserMessage(content="thanks"))
    return [first, second, third, first[2:]]


@pytest.mark.parametrize("kind", [OpenAIProvider, AnthropicProvider])
async def test_reused_pieces_make_the_body_a_fresh_build_makes(kind: type[HTTPProvider]) -> None:
    settings = ProviderSettings(model="m")
    kept = kind(settings)
    tools = specs("fs-read", "patch")
    for n, messages in enumerate(rounds()):
        request = ChatRequest(system="Be brief.", messages=messages, tools=tools[: n % 3])
        fresh = kind(settings)
        assert json.loads(kept.request_body(request, "m")) == json.loads(
            fresh.request_body(request, "m")
        )
        await fresh.aclose()
    await kept.aclose()


@pytest.mark.parametrize("kind", [OpenAIProvider, AnthropicProvider])
async def test_a_call_holding_nan_leaves_its_session_sendable(kind: type[HTTPProvider]) -> None:
    call = ToolCall(id="c1", name="fs-read", arguments='{"path": "a.py", "limit": NaN}')
    messages = (UserMessage(content="go"), AssistantMessage(tool_calls=(call,)))
    provider = kind(ProviderSettings(model="m"))
    body = json.loads(provider.request_body(ChatRequest(system="", messages=messages), "m"))
    await provider.aclose()
    sent = json.dumps(body["messages"][-1])
    assert ('"input": {}' if kind is AnthropicProvider else "NaN}") in sent
