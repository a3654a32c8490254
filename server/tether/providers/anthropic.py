"""The Anthropic Messages API, streamed."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

from tether.config import ProviderSettings
from tether.models import AssistantMessage, Message, ToolMessage, Usage, UserMessage
from tether.providers.base import ChatRequest, StreamEvent, ToolSpec
from tether.providers.encoded import EncodedSpecs, Encodings, dumps
from tether.providers.failures import ended_early, failed_mid_reply
from tether.providers.sse import aiter_sse, json_object
from tether.providers.streaming import Gathered, HTTPProvider, tokens

API_VERSION = "2023-06-01"
# Error events worth asking again for, while nothing of the reply has been shown.
RETRY_ERRORS = frozenset({"overloaded_error", "api_error", "rate_limit_error"})


class AnthropicProvider(HTTPProvider):
    def __init__(self, settings: ProviderSettings, client: httpx.AsyncClient | None = None) -> None:
        super().__init__(settings, client)
        self._parts = Encodings(_part)
        self._tools = EncodedSpecs(to_anthropic_tool)

    def url(self) -> str:
        # The API's own base has no /v1; accept one given with it too.
        return f"{self.settings.resolved_base_url().removesuffix('/v1')}/v1/messages"

    def headers(self) -> dict[str, str]:
        key = self.api_key()
        return {"anthropic-version": API_VERSION, **({"x-api-key": key} if key else {})}

    def body(self, request: ChatRequest, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "max_tokens": self.settings.max_tokens,
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        if request.tools:
            body["tools"] = self._tools.of(request.tools)
        return body

    def messages(self, request: ChatRequest) -> list[str]:
        return to_anthropic_turns(self._parts.of(request.messages))

    def cut_off_hint(self) -> str:
        return f"raise tether.provider.max_tokens (now {self.settings.max_tokens})"

    async def read_reply(
        self, response: httpx.Response, body: AsyncIterator[bytes]
    ) -> AsyncGenerator[StreamEvent, None]:
        reply = Gathered()
        usage: Usage | None = None
        stop_reason = None
        async for event in aiter_sse(body):
            data = json_object(event.data)
            match data.get("type") or event.event:
                case "message_start":
                    usage = _usage(usage, (data.get("message") or {}).get("usage"))
                case "content_block_start":
                    block = data.get("content_block") or {}
                    if block.get("type") == "tool_use":
                        # Its "input" is always {} here; the arguments follow as deltas.
                        reply.call(_index(data)).named(block.get("id"), block.get("name"))
                    elif block.get("type") == "text" and block.get("text"):
                        yield reply.text(block["text"])
                case "content_block_delta":
                    delta = data.get("delta") or {}
                    if delta.get("type") == "text_delta" and delta.get("text"):
                        yield reply.text(delta["text"])
                    elif delta.get("type") == "input_json_delta" and (
                        (index := _index(data)) >= 0 or index in reply.calls
                    ):
                        # Kept by its block's index even when it comes before the block's
                        # start (a proxy that reorders events): the start names the call.
                        reply.call(index).add(str(delta.get("partial_json") or ""))
                case "message_delta":
                    stop_reason = (data.get("delta") or {}).get("stop_reason") or stop_reason
                    usage = _usage(usage, data.get("usage"))
                case "message_stop":
                    break
                case "error":
                    error = data.get("error") or {}
                    retry = error.get("type") in RETRY_ERRORS
                    raise failed_mid_reply(error.get("message") or error, retryable=retry)
                # ping, content_block_stop, and event types added later carry nothing we need.
        else:
            raise ended_early()
        yield reply.reply(self, usage, cut=stop_reason == "max_tokens")


def to_anthropic_tool(spec: ToolSpec) -> dict[str, Any]:
    return {"name": spec.name, "description": spec.description, "input_schema": spec.parameters}


@dataclass(frozen=True, slots=True)
class _Part:
    """One message's part of a turn: its blocks as JSON text, and what orders them."""

    role: str
    blocks: tuple[str, ...]
    answers: tuple[str | None, ...]  # by block: the call a tool result answers
    calls: tuple[str, ...] = ()  # an assistant message's call ids, in the order made


def _part(message: Message) -> _Part:
    # By exact type: see openai.to_openai_message.
    if type(message) is UserMessage:
        return _Part("user", (dumps({"type": "text", "text": message.content}),), (None,))
    if type(message) is ToolMessage:
        r = message.result
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": r.call_id,
            "content": r.content,
        }
        block |= {"is_error": True} if r.status != "ok" else {}
        return _Part("user", (dumps(block),), (r.call_id,))
    assert type(message) is AssistantMessage
    content, calls = message.content, message.tool_calls
    blocks: list[dict[str, Any]] = [{"type": "text", "text": content}] if content else []
    blocks += [_tool_use(c.id, c.name, c.parsed_arguments()) for c in calls]
    ids = tuple(c.id for c in calls)
    return _Part("assistant", tuple(map(dumps, blocks)), (None,) * len(blocks), ids)


def to_anthropic_turns(parts: list[_Part]) -> list[str]:
    """Our transcript as the API wants it: user and assistant turns strictly alternating.

    The results of one reply's calls become one user turn of ``tool_result`` blocks, in
    the order the calls were made; text said to the model after them (the batch nudge)
    closes that same turn, since tool results must come first in it.
    """
    turns: list[tuple[str, list[tuple[str | None, str]]]] = []
    order: dict[str, int] = {}  # call id -> its place among its reply's calls
    for part in parts:
        order |= {call: at for at, call in enumerate(part.calls)}
        if not part.blocks:  # the API refuses an empty turn; an empty reply says nothing anyway
            continue
        if turns and turns[-1][0] == part.role:
            turns[-1][1].extend(zip(part.answers, part.blocks, strict=True))
        else:
            turns.append((part.role, list(zip(part.answers, part.blocks, strict=True))))
    wire = []
    for role, blocks in turns:
        if role == "user":
            blocks.sort(key=lambda block: _place(block[0], order))
        wire.append(f'{{"role":"{role}","content":[{",".join(text for _, text in blocks)}]}}')
    return wire


def _place(answers: str | None, order: dict[str, int]) -> tuple[int, int]:
    """Tool results first, in call order (they are stored as they finish); then text."""
    if answers is not None:
        return (0, order.get(answers, len(order)))
    return (1, 0)


def _tool_use(call_id: str, name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    # The API takes only an object; arguments that never parsed were answered with an error.
    args = arguments if isinstance(arguments, dict) else {}
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def _index(data: dict[str, Any]) -> int:
    index = data.get("index")
    return index if isinstance(index, int) else -1


def _usage(usage: Usage | None, raw: object) -> Usage | None:
    """``message_start`` has the input, ``message_delta`` the final output count; counts
    no one can use are taken as not reported."""
    if not isinstance(raw, dict) or not raw:
        return usage
    known = usage or Usage()
    # Cached input is input too, as OpenAI's prompt_tokens count it.
    parts = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
    counts = [tokens(raw.get(part) or 0) for part in parts]
    wrote = tokens(raw.get("output_tokens") or known.output_tokens)
    read = tokens(sum(n for n in counts if n is not None))
    if None in counts or wrote is None or read is None:
        return usage
    return Usage(input_tokens=read or known.input_tokens, output_tokens=wrote)
