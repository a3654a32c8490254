"""A reply's calls as the dispatcher sees them, and what a turn counts across rounds."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import BaseModel, ValidationError

from tether.errors import ToolError, problems
from tether.models import PendingCall, ToolCall
from tether.tools.base import Tool, ToolContext


@dataclass
class TurnState:
    """What a turn counts across its rounds."""

    budget: int
    repeat_limit: int
    used: int = 0
    requests: int = 0
    seen: Counter[str] = field(default_factory=Counter)
    stop_reason: str | None = None
    pending: list[PendingCall] = field(default_factory=list)

    def count(self, calls: Sequence[ToolCall]) -> TurnState:
        """Count calls this turn already made (a turn resumed, maybe in a new process)."""
        self.used += len(calls)
        self.seen.update(call_key(call) for call in calls)
        return self


@dataclass
class Call:
    idx: int
    call: ToolCall
    key: str
    tool: Tool | None = None
    params: BaseModel | None = None
    invalid: str | None = None
    read_only: bool = True
    started_at: datetime | None = None

    def pending(self, ctx: ToolContext) -> PendingCall:
        summary = self.call.name
        if self.tool is not None and self.params is not None:
            summary = self.tool.summary(self.params, ctx)
        return PendingCall(
            call_id=self.call.id,
            tool=self.call.name,
            arguments=self.call.parsed_arguments(),
            summary=summary,
        )


def prepare(tools: dict[str, Tool], ctx: ToolContext, idx: int, call: ToolCall) -> Call:
    """A call checked against its tool: unknown, malformed and invalid calls say why."""
    c = Call(idx=idx, call=call, key=call_key(call))
    c.tool = tools.get(call.name)
    if c.tool is None:
        known = ", ".join(sorted(tools))
        c.invalid = f"unknown tool {call.name!r}; the tools are: {known}"
        return c
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError as exc:
        c.invalid = f"the arguments are not valid JSON ({exc}); send a JSON object"
        return c
    try:
        c.params = c.tool.params.model_validate(arguments)
    except ValidationError as exc:
        c.invalid = f"invalid arguments for {call.name}: {problems(exc)}"
        return c
    try:
        c.read_only = c.tool.read_only(c.params, ctx)
    except ToolError as exc:
        c.invalid = str(exc)
    return c


def call_key(call: ToolCall) -> str:
    """Identity for duplicates and the repeat guard: same tool, same arguments."""
    try:
        arguments = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
    except ValueError:
        arguments = call.arguments
    return f"{call.name}\x00{arguments}"
