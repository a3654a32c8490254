"""Any OpenAI-compatible Chat Completions endpoint: OpenAI, Ollama, vLLM, llama.cpp, LM Studio."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import httpx

from tether.config import ProviderSettings
from tether.models import AssistantMessage, Message, ToolMessage, Usage, UserMessage
from tether.providers.base import ChatRequest, StreamEvent, ToolSpec
from tether.providers.body import first_bytes
from tether.providers.encoded import EncodedSpecs, Encodings, dumps
from tether.providers.failures import ended_early, failed_mid_reply, over_limit
from tether.providers.sse import aiter_sse, json_object
from tether.providers.streaming import REPLY_LIMIT, Gathered, HTTPProvider, PartialCall, tokens


class OpenAIProvider(HTTPProvider):
    def __init__(self, settings: ProviderSettings, client: httpx.AsyncClient | None = None) -> None:
        super().__init__(settings, client)
        self._encoded = Encodings(_encoded)
        self._tools = EncodedSpecs(to_openai_tool)

    def url(self) -> str:
        return f"{self.settings.resolved_base_url()}/chat/completions"

    def headers(self) -> dict[str, str]:
        key = self.api_key()
        return {"Authorization": f"Bearer {key}"} if key else {}

    def body(self, request: ChatRequest, model: str) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": model,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = self._tools.of(request.tools)
        return body

    def messages(self, request: ChatRequest) -> list[str]:
        system = [dumps({"role": "system", "content": request.system})] if request.system else []
        return system + self._encoded.of(request.messages)

    def cut_off_hint(self) -> str:
        return "the model's output limit or context window on the server is too small for it"

    async def read_reply(
        self, response: httpx.Response, body: AsyncIterator[bytes]
    ) -> AsyncGenerator[StreamEvent, None]:
        reply = Gathered()
        if response.headers.get("content-type", "").startswith("application/json"):
            # Some servers and proxies ignore ``stream`` and answer all at once.
            data, more = await first_bytes(body, REPLY_LIMIT)
            if more:
                raise over_limit(
                    f"a reply of more than {REPLY_LIMIT:,} bytes, past tether's reply limit"
                )
            whole = _checked(json_object(data.decode("utf-8", "replace")))
            choice = (whole.get("choices") or [{}])[0]
            message = choice.get("message") or {}
            if message.get("content"):
                yield reply.text(message["content"])
            for index, call in enumerate(message.get("tool_calls") or []):
                _add(reply.call(index), call)
            cut = choice.get("finish_reason") == "length"
            yield reply.reply(self, _usage(whole), cut=cut)
            return
        usage: Usage | None = None
        finish: str | None = None
        async for event in aiter_sse(body):
            if event.data.strip() == "[DONE]":
                break
            chunk = _checked(json_object(event.data))
            usage = _usage(chunk) or usage
            choice = (chunk.get("choices") or [{}])[0]
            finish = choice.get("finish_reason") or finish
            delta = choice.get("delta") or {}
            if content := delta.get("content"):
                yield reply.text(content)
            for call_delta in delta.get("tool_calls") or []:
                _add(_partial(reply, call_delta), call_delta)
        else:
            # Without [DONE], only a finish reason tells a whole reply from a cut connection.
            if finish is None:
                raise ended_early()
        yield reply.reply(self, usage, cut=finish == "length")


def to_openai_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


def to_openai_message(message: Message) -> dict[str, Any]:
    # By exact type, not `match` class patterns: each of those is an isinstance check through
    # pydantic's ABC metaclass (3x slower on a long session's first request).
    if type(message) is UserMessage:
        return {"role": "user", "content": message.content}
    if type(message) is ToolMessage:
        result = message.result
        return {"role": "tool", "tool_call_id": result.call_id, "content": result.content}
    assert type(message) is AssistantMessage
    content, calls = message.content, message.tool_calls
    if not calls:
        # Some servers reject a null content on a call-less assistant message.
        return {"role": "assistant", "content": content}
    return {
        "role": "assistant",
        "content": content or None,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }


def _encoded(message: Message) -> str:
    return dumps(to_openai_message(message))


def _add(call: PartialCall, delta: dict[str, Any]) -> PartialCall:
    function = delta.get("function") or {}
    call.named(delta.get("id"), function.get("name"))
    piece = function.get("arguments")
    if isinstance(piece, str):
        call.add(piece)
    elif piece is not None:
        # A few servers send the arguments as an object rather than JSON text.
        call.add(json.dumps(piece))
    return call


def _checked(chunk: dict[str, Any]) -> dict[str, Any]:
    if error := chunk.get("error"):
        raise failed_mid_reply(error.get("message") if isinstance(error, dict) else error)
    return chunk


def _usage(chunk: dict[str, Any]) -> Usage | None:
    # With include_usage, every chunk carries "usage": null except the last.
    if not isinstance(raw := chunk.get("usage"), dict):
        return None
    read = tokens(raw.get("prompt_tokens") or 0)
    wrote = tokens(raw.get("completion_tokens") or 0)
    if read is None or wrote is None:
        return None  # counts no one can use: as if none were reported
    return Usage(input_tokens=read, output_tokens=wrote)


def _partial(reply: Gathered, delta: dict[str, Any]) -> PartialCall:
    index = delta.get("index")
    if not isinstance(index, int):
        # Without an index, a delta carrying an id opens a new call; the rest continue the last.
        calls = reply.calls
        index = len(calls) if delta.get("id") or not calls else max(calls)
    return reply.call(index)
