"""The typed vocabulary every layer shares: messages, calls, results, turn outcomes.

These shapes are the contract's (``shared/spec/contract.md``): what the store keeps,
what the provider is handed, and what ``tether.history`` / ``tether.run`` return.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ToolStatus = Literal["ok", "error", "denied", "not_executed", "interrupted", "cancelled"]
TurnStatus = Literal["done", "awaiting_approval", "cancelled", "stopped", "error"]
Role = Literal["user", "assistant", "tool"]
# A person's decision on a parked call, as recorded: "dismissed" parks it without asking
# again; "applied" means they applied the change in the editor themselves.
RecordedDecision = Literal["allow", "deny", "dismissed", "applied"]


def now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 UTC with milliseconds, as the contract spells times."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def parse_iso(text: str | None) -> datetime | None:
    """The inverse of ``iso``."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(Frozen):
    """One call as the model made it. ``arguments`` is the model's raw JSON text."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any] | str:
        """The arguments as an object where they parse as one, else the raw text."""
        try:
            value = json.loads(self.arguments or "{}")
        except ValueError:
            return self.arguments
        return value if isinstance(value, dict) else self.arguments


class ToolResult(Frozen):
    """The one answer a call gets. ``content`` is exactly what the model is shown."""

    call_id: str
    tool: str
    status: ToolStatus
    content: str
    started_at: datetime | None = None
    ended_at: datetime | None = None
    reason: str | None = None
    decided_by: str | None = None


class Usage(Frozen):
    input_tokens: int = 0
    output_tokens: int = 0


class Reply(Frozen):
    """A complete assistant reply, assembled from the provider's stream."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage | None = None


class UserMessage(Frozen):
    role: Literal["user"] = "user"
    content: str


class AssistantMessage(Frozen):
    role: Literal["assistant"] = "assistant"
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()


class ToolMessage(Frozen):
    role: Literal["tool"] = "tool"
    result: ToolResult


Message = UserMessage | AssistantMessage | ToolMessage


class PendingCall(Frozen):
    call_id: str
    tool: str
    arguments: dict[str, Any] | str
    summary: str


class TurnUsage(Frozen):
    """What one turn (a prompt and the rounds it led to) cost at the provider."""

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0


class Stats(Frozen):
    tool_calls: int = 0
    tool_time_s: float = 0.0
    tool_time_sum_s: float = 0.0
    requests: int = 0  # provider requests that reported usage
    input_tokens: int = 0
    output_tokens: int = 0
    turns: list[TurnUsage] = Field(default_factory=list)


class Compaction(Frozen):
    """Where a session's context was rebuilt: messages before ``before`` were summarised."""

    before: int  # index into the history's messages
    summary: str
    created: str


class TurnResult(Frozen):
    session: str
    status: TurnStatus
    answer: str | None = None
    pending: list[PendingCall] | None = None
    error: str | None = None


class SessionInfo(Frozen):
    id: str
    title: str
    status: str
    updated: str
    workspace: str = ""
    owner: int | None = None


class Task(Frozen):
    """A scheduled prompt, as ``tether.tasks`` lists it."""

    id: str
    prompt: str
    every: str
    session: str | None
    next_run: str
    last_run: str | None
    last_status: str | None
    last_session: str | None


class History(Frozen):
    messages: list[dict[str, Any]] = Field(default_factory=list)
    pending: list[PendingCall] = Field(default_factory=list)
    stats: Stats = Stats()
    compactions: list[Compaction] = Field(default_factory=list)


def message_to_wire(message: Message) -> dict[str, Any]:
    """A message as the contract shows it in ``tether.history``."""
    match message:
        case UserMessage(content=content):
            return {"role": "user", "content": content}
        case AssistantMessage(content=content, tool_calls=calls):
            wire: dict[str, Any] = {"role": "assistant", "content": content}
            if calls:
                wire["tool_calls"] = [
                    {"id": c.id, "name": c.name, "arguments": c.parsed_arguments()} for c in calls
                ]
            return wire
        case ToolMessage(result=r):
            return {
                "role": "tool",
                "content": r.content,
                "call_id": r.call_id,
                "tool": r.tool,
                "status": r.status,
                "started_at": iso(r.started_at),
                "ended_at": iso(r.ended_at),
            }
