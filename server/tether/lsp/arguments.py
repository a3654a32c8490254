"""What the contract's commands take and give back, apart from pygls.

Each command takes one JSON object, validated into an ``Argument``, and answers with
one model; the results that are not the agent's own (``tether.models``) are here. The
handlers live in ``commands.py``; ``tether.contract`` turns these into the schema
the editor clients are generated from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, model_serializer

from tether.models import McpState, RewindWhat, Scope, SessionStatus, Task, Verdict


class Argument(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class TurnArgument(Argument):
    """A command that runs a turn. ``wait: false`` (contract v2): answered ``Started`` at
    once, the turn's end told by its last status update."""

    wait: bool = True


class RunArgument(TurnArgument):
    prompt: str = Field(min_length=1)
    session: str | None = None


class SessionArgument(Argument):
    session: str


class NoArgument(Argument):
    pass


class ApproveArgument(TurnArgument):
    session: str
    calls: list[str] | None = None
    remember: Scope | None = None


class DenyArgument(TurnArgument):
    session: str
    calls: list[str] | None = None
    reason: str | None = None


class AppliedArgument(TurnArgument):
    session: str
    call: str


class PlannedArgument(Argument):
    session: str
    call: str


class RewindArgument(Argument):
    session: str
    turn: int | None = Field(
        default=None,
        ge=1,
        description="The turn (1: the first prompt); default: the last turn that changed files.",
    )
    what: RewindWhat = Field(
        default="files",
        description="files: take the turn's change back (the person's edits since stay); "
        "conversation: the model is no longer sent the turn and what followed; both.",
    )


class ScheduleArgument(Argument):
    prompt: str = Field(min_length=1)
    every: str
    session: str | None = None


class TaskArgument(Argument):
    task: str


class Scheduled(BaseModel):
    task: str


class Unscheduled(BaseModel):
    removed: bool


class TaskList(BaseModel):
    tasks: list[Task]


class Started(BaseModel):
    """A turn started with ``wait: false``: it runs; its end comes as a status update."""

    session: str
    status: Literal["running"] = "running"


class Cancelled(BaseModel):
    cancelled: bool


class SessionSummary(BaseModel):
    """A session as ``tether.sessions`` lists it."""

    id: str
    title: str
    status: SessionStatus
    updated: str


class Sessions(BaseModel):
    sessions: list[SessionSummary]


class Planned(BaseModel):
    """A waiting patch's file: its text now (null: it does not exist yet) and after."""

    path: str  # absolute
    before: str | None
    after: str

    @model_serializer(mode="wrap")
    def _keep_null_before(
        self, dump: Callable[[Planned], dict[str, Any]], info: SerializationInfo
    ) -> dict[str, Any]:
        # Responses drop nulls (optional fields are left out); this null says something.
        return {**dump(self), "before": self.before}


class RuleArgument(Argument):
    rule: str = Field(min_length=1, description="The rule's id, as tether.rules lists it.")


class RuleInfo(BaseModel):
    """A remembered approval: which tool, what it covers (in words), where it holds, and
    whether it allows those calls or denies them (ACP's reject_always)."""

    id: str
    tool: str
    match: str
    scope: Scope
    session: str | None = None  # for a rule of one session
    created: str
    verdict: Verdict


class Rules(BaseModel):
    rules: list[RuleInfo]


class Forgotten(BaseModel):
    removed: bool


class ToolInfo(BaseModel):
    """A tool the model may call: built in, or an MCP server's (``mcp:NAME``)."""

    name: str
    source: str  # "builtin", or "mcp:NAME"
    read_only: bool  # its calls only read, and run unasked (one outside the workspace asks)
    description: str


class ServerInfo(BaseModel):
    """An MCP server, live: where it is, and how many of its tools are in force."""

    name: str
    state: McpState
    tools: int
    detail: str  # why it failed (with its last stderr lines), or what it waits for; or ""


class Tools(BaseModel):
    tools: list[ToolInfo]
    servers: list[ServerInfo]  # each MCP server's live state
