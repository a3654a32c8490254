"""Test doubles for the agent's seams: a scripted provider and simple tools (code in the
test tree, never a patch of tether's own modules)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether.errors import ProviderError, ToolError
from tether.models import Reply, ToolCall
from tether.providers.base import ChatRequest, StreamEvent, TextDelta
from tether.tools.base import ToolContext


def reply(*calls: tuple[str, dict[str, Any] | str], text: str = "") -> Reply:
    """A reply with the given calls; ids are unique within the test run."""
    made = tuple(
        ToolCall(
            id=f"call_{next(_ids)}", name=name, arguments=a if isinstance(a, str) else json.dumps(a)
        )
        for name, a in calls
    )
    return Reply(text=text, tool_calls=made)


def _counter() -> Iterable[int]:
    n = 0
    while True:
        n += 1
        yield n


_ids = iter(_counter())


class ScriptedProvider:
    """Streams scripted replies in order and records every request it was handed."""

    def __init__(self, *replies: Reply | Exception) -> None:
        self.replies = list(replies)
        self.requests: list[ChatRequest] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if not self.replies:
            raise ProviderError("scripted provider: no reply left")
        scripted = self.replies.pop(0)
        if isinstance(scripted, Exception):
            raise scripted
        for word in scripted.text.split(" "):
            yield TextDelta(text=word)
        yield scripted

    async def aclose(self) -> None:
        pass


class EchoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    value: str = ""
    sleep_s: float = 0.0
    fail: bool = False


class EchoTool:
    """A read-only tool that sleeps, then echoes; or fails when asked."""

    name = "echo"
    description = "Echo a value back."
    params = EchoParams

    def __init__(self) -> None:
        self.running = 0
        self.peak = 0
        self._changed: asyncio.Condition | None = None

    def _condition(self) -> asyncio.Condition:
        if self._changed is None:
            self._changed = asyncio.Condition()
        return self._changed

    async def until_running(self, n: int) -> None:
        """Wait until ``n`` calls run at once: an event, not a sleep."""
        changed = self._condition()
        async with changed:
            await changed.wait_for(lambda: self.running >= n)

    def read_only(self, params: EchoParams, ctx: ToolContext) -> bool:
        return True

    def summary(self, params: EchoParams, ctx: ToolContext) -> str:
        return f"echo {params.value}"

    async def run(self, params: EchoParams, ctx: ToolContext) -> str:
        self.running += 1
        self.peak = max(self.peak, self.running)
        changed = self._condition()
        async with changed:
            changed.notify_all()
        try:
            ctx.output(f"echoing {params.value}\n")  # as a command prints while it runs
            await asyncio.sleep(params.sleep_s)
            if params.fail:
                raise ToolError(f"failed as asked: {params.value}")
            return f"echo: {params.value}"
        finally:
            self.running -= 1


class WriteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str
    content: str


class WriteTool:
    """An approval-requiring tool: writes a file in the workspace."""

    name = "write"
    description = "Write a file."
    params = WriteParams

    def read_only(self, params: WriteParams, ctx: ToolContext) -> bool:
        return False

    def summary(self, params: WriteParams, ctx: ToolContext) -> str:
        return f"write {params.path}"

    async def run(self, params: WriteParams, ctx: ToolContext) -> str:
        Path(ctx.resolve(params.path)).write_text(params.content)
        return f"wrote {params.path}"
