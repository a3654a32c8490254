"""Any OpenAI-compatible Chat Completions endpoint: OpenAI, Ollama, vLLM, llama.cpp, LM Studio."""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from tether.config import ProviderSettings
from tether.errors import ProviderError
from tether.models import (
    AssistantMessage,
    Message,
    Reply,
    ToolCall,
    ToolMessage,
    Usage,
    UserMessage,
)
from tether.providers.base import ChatRequest, StreamEvent, TextDelta, ToolSpec
from tether.providers.retry import shown_url, stream_with_retries
from tether.providers.sse import aiter_sse


class OpenAIProvider:
    def __init__(self, settings: ProviderSettings, client: httpx.AsyncClient | None = None) -> None:
        self._settings = settings
        self._timeout = httpx.Timeout(settings.timeout_s, connect=settings.connect_timeout_s)
        self._owns_client = client is None
        self._client = client or httpx.AsyncClient(timeout=self._timeout)

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        model = self._settings.model
        if not model:
            raise ProviderError(
                "no model configured: set TETHER_MODEL (or tether.provider.model in the "
                "editor's settings) to a model the provider serves"
            )
        body: dict[str, Any] = {
            "model": model,
            "messages": to_openai_messages(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [to_openai_tool(spec) for spec in request.tools]
        headers = {"Accept": "text/event-stream"}
        key = self._settings.api_key.get_secret_value() if self._settings.api_key else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        http_request = self._client.build_request(
            "POST",
            f"{self._settings.resolved_base_url()}/chat/completions",
            json=body,
            headers=headers,
            # Per request, so the settings' timeouts hold for a client passed in too.
            timeout=self._timeout,
        )
        async for event in stream_with_retries(
            self._client, http_request, read_reply, self._settings
        ):
            yield event

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()


def to_openai_tool(spec: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": spec.parameters,
        },
    }


def to_openai_messages(system: str, messages: tuple[Message, ...]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    for message in messages:
        match message:
            case UserMessage(content=content):
                wire.append({"role": "user", "content": content})
            case AssistantMessage(content=content, tool_calls=calls):
                out: dict[str, Any] = {"role": "assistant", "content": content or None}
                if calls:
                    out["tool_calls"] = [
                        {
                            "id": c.id,
                            "type": "function",
                            "function": {"name": c.name, "arguments": c.arguments},
                        }
                        for c in calls
                    ]
                else:
                    # Some servers reject a null content on a call-less assistant message.
                    out["content"] = content
                wire.append(out)
            case ToolMessage(result=result):
                wire.append(
                    {"role": "tool", "tool_call_id": result.call_id, "content": result.content}
                )
    return wire


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def add(self, delta: dict[str, Any]) -> _PartialCall:
        self.id = self.id or str(delta.get("id") or "")
        function = delta.get("function") or {}
        self.name = self.name or str(function.get("name") or "")
        piece = function.get("arguments")
        if isinstance(piece, str):
            self.arguments.append(piece)
        elif piece is not None:
            # A few servers send the arguments as an object rather than JSON text.
            self.arguments.append(json.dumps(piece))
        return self

    def done(self) -> ToolCall:
        # The id ties each result to its call; a server that sends none gets one made up.
        call_id = self.id or f"call_{uuid.uuid4().hex[:24]}"
        return ToolCall(id=call_id, name=self.name, arguments="".join(self.arguments))


async def read_reply(response: httpx.Response) -> AsyncGenerator[StreamEvent, None]:
    """Text deltas as they come, then the whole reply with its calls assembled."""
    url = shown_url(response.request.url)
    if response.headers.get("content-type", "").startswith("application/json"):
        # Some servers and proxies ignore ``stream`` and answer all at once.
        body = _decode((await response.aread()).decode("utf-8", "replace"), url)
        message = (body.get("choices") or [{}])[0].get("message") or {}
        if message.get("content"):
            yield TextDelta(text=message["content"])
        calls = [_PartialCall().add(call) for call in message.get("tool_calls") or []]
        yield _reply([message.get("content") or ""], calls, _usage(body))
        return
    text: list[str] = []
    partials: dict[int, _PartialCall] = {}
    usage: Usage | None = None
    async for event in aiter_sse(response):
        if event.data.strip() == "[DONE]":
            break
        chunk = _decode(event.data, url)
        usage = _usage(chunk) or usage
        choices = chunk.get("choices") or [{}]
        delta = choices[0].get("delta") or {}
        if content := delta.get("content"):
            text.append(content)
            yield TextDelta(text=content)
        for call_delta in delta.get("tool_calls") or []:
            _partial(partials, call_delta).add(call_delta)
    yield _reply(text, [partials[i] for i in sorted(partials)], usage)


def _reply(text: list[str], calls: list[_PartialCall], usage: Usage | None) -> Reply:
    return Reply(text="".join(text), tool_calls=tuple(c.done() for c in calls), usage=usage)


def _usage(chunk: dict[str, Any]) -> Usage | None:
    # With include_usage, every chunk carries "usage": null except the last.
    if not (raw := chunk.get("usage")):
        return None
    return Usage(
        input_tokens=int(raw.get("prompt_tokens") or 0),
        output_tokens=int(raw.get("completion_tokens") or 0),
    )


def _partial(calls: dict[int, _PartialCall], delta: dict[str, Any]) -> _PartialCall:
    index = delta.get("index")
    if not isinstance(index, int):
        # Without an index, a delta carrying an id opens a new call; the rest continue the last.
        index = len(calls) if delta.get("id") or not calls else max(calls)
    return calls.setdefault(index, _PartialCall())


def _decode(data: str, url: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except ValueError:
        raise ProviderError(
            f"the model provider at {url} sent an unreadable chunk: {data[:200]!r}"
        ) from None
    if not isinstance(chunk, dict):
        raise ProviderError(f"the model provider at {url} sent an unexpected chunk: {data[:200]!r}")
    if error := chunk.get("error"):
        said = error.get("message") if isinstance(error, dict) else error
        raise ProviderError(f"the model provider at {url} failed mid-reply: {said}")
    return chunk
