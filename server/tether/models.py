"""The typed vocabulary every layer shares: messages, calls, results, turn outcomes.

These shapes are the contract's (``shared/spec/contract.md``): what the store keeps,
what the provider is handed, and what ``tether.history`` / ``tether.run`` return.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ToolStatus = Literal["ok", "error", "denied", "not_executed", "interrupted", "cancelled"]
TurnStatus = Literal["done", "awaiting_approval", "cancelled", "stopped", "error"]
# A session's status: a turn's last status, or what it is doing now. "interrupted": a
# turn's server died while it ran (found on the next load); "idle": never ran a turn.
SessionStatus = TurnStatus | Literal["idle", "running", "interrupted"]
PARKED: SessionStatus = "awaiting_approval"
Role = Literal["user", "assistant", "tool"]
# A person's decision on a parked call, as recorded: "dismissed" parks it without asking
# again; "applied" means they applied the change in the editor themselves.
RecordedDecision = Literal["allow", "deny", "dismissed", "applied"]
# Where a remembered approval holds: this session, or every session of the workspace.
Scope = Literal["session", "workspace"]
# What a remembered rule says of the calls it covers: run them unasked, or deny them unasked.
Verdict = Literal["allow", "deny"]
# Where an MCP server is (`tether.sources`).
McpState = Literal[
    "not started", "waiting", "asking", "not allowed", "starting", "running", "restarting",
    "failed", "stopped",
]  # fmt: skip
RewindWhat = Literal["files", "conversation", "both"]


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


MAX_ARGUMENT_BYTES = 8 * 2**20  # a call's arguments, as JSON text
MAX_ARGUMENT_DEPTH = 64  # objects and arrays nested in them
# A JSON string (possessive, so never backtracking; an unterminated one runs to the end)
# or a bracket, captured: one pass over the text, whatever it holds.
_STRING_OR_BRACKET = re.compile(r'"(?:[^"\\]++|\\.)*+"?|([\[\]{}])')


class ArgumentsTooBig(ValueError):
    pass


def parse_arguments(text: str) -> Any:
    """A call's JSON arguments, within bounds: a stored call must never be able to make
    a session unloadable (JSON nested 100,000 deep overflows any recursive parser), and
    one call's arguments must not cost gigabytes. ``ValueError`` says what is wrong."""
    if len(text) > MAX_ARGUMENT_BYTES:
        raise ArgumentsTooBig(
            f"the arguments are {len(text):,} characters; the limit is {MAX_ARGUMENT_BYTES:,}"
        )
    depth = deepest = 0
    for bracket in _STRING_OR_BRACKET.findall(text):
        if bracket:  # not a string
            depth += 1 if bracket in "[{" else -1
            deepest = max(deepest, depth)
    if deepest > MAX_ARGUMENT_DEPTH:
        raise ArgumentsTooBig(
            f"the arguments nest {deepest} levels deep; the limit is {MAX_ARGUMENT_DEPTH}"
        )
    try:
        return json.loads(text or "{}", parse_constant=_not_json, parse_float=_finite)
    except RecursionError:
        raise ArgumentsTooBig("the arguments nest too deep to read") from None


def _not_json(name: str) -> Any:
    # Python reads NaN and Infinity; no JSON encoder that checks writes them back, so a
    # call holding one would make every later request of its session fail to encode.
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    if not math.isfinite(value := float(text)):
        raise ValueError(f"{text[:40]} is past the largest number JSON carries")
    return value


def shortened(value: Any, limit: int) -> Any:
    """A JSON-like value with each string longer than ``limit`` cut, saying how much: what
    a notification or a listing carries of a call's arguments (a whole file's content
    can be megabytes, and is read from the store when it is needed)."""
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… [{len(value) - limit:,} more characters]"
    if isinstance(value, dict):
        return {k: shortened(v, limit) for k, v in value.items()}
    if isinstance(value, list):
        return [shortened(v, limit) for v in value]
    return value


class ToolCall(Frozen):
    """One call as the model made it. ``arguments`` is the model's raw JSON text."""

    id: str
    name: str
    arguments: str

    def parsed_arguments(self) -> dict[str, Any] | str:
        """The arguments as an object where they parse as one, else the raw text (cut
        short when it is too big to show)."""
        try:
            value = parse_arguments(self.arguments)
        except ArgumentsTooBig as exc:
            return f"[not shown: {exc}]"
        except ValueError:
            return self.arguments
        return _sendable_keys(value) if isinstance(value, dict) else self.arguments


def _sendable_keys(value: Any) -> Any:
    """``value`` with each lone surrogate in an object's key escaped (``"\\ud800"``): a
    JSON encoder takes one in a string but refuses one in a key, and a model can send
    either (``{"path": {"\\ud800": 1}}``); a string is escaped where text leaves."""
    if isinstance(value, dict):
        return {_sendable(k): _sendable_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_sendable_keys(v) for v in value]
    return value


def _sendable(key: str) -> str:
    return key if key.isascii() else key.encode("utf-8", "backslashreplace").decode("utf-8")


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
    sandboxed: bool | None = None  # a command: whether it ran in the sandbox


# Tokens one request may count: far past any model's context window, and small enough
# that a session's stats, summed over its requests, stay exact as JSON numbers (2**53).
MAX_TOKENS = 10**9


class Usage(Frozen):
    input_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS)
    output_tokens: int = Field(default=0, ge=0, le=MAX_TOKENS)


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
    commands_sandboxed: int = 0  # commands that ran in the sandbox
    commands_unsandboxed: int = 0  # ... and that ran with the person's full rights
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


class RecordedChoice(Frozen):
    """What a person decided on one call of a parked reply, before it resumed."""

    decision: RecordedDecision
    reason: str | None = None


class SessionInfo(Frozen):
    id: str
    title: str
    status: SessionStatus
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
