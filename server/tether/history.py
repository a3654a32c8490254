"""A session's history as ``tether.history`` shows it (the contract's shapes): its
messages with each call's arguments parsed, the calls still waiting, and the checkpoints
and rewinds of its turns (``tether.rewind`` answers a ``Rewound``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import Field, SerializationInfo, model_serializer

from tether.models import (
    AssistantMessage,
    Compaction,
    Frozen,
    Message,
    PendingCall,
    RewindWhat,
    Stats,
    ToolMessage,
    ToolStatus,
    UserMessage,
    iso,
)


class WireCall(Frozen):
    id: str
    name: str
    arguments: dict[str, Any] | str


class HistoryUser(Frozen):
    role: Literal["user"] = "user"
    content: str
    turn: int | None = None  # the turn it belongs to: 1 for the session's first prompt


class HistoryAssistant(Frozen):
    role: Literal["assistant"] = "assistant"
    content: str
    tool_calls: list[WireCall] | None = None
    turn: int | None = None


class HistoryTool(Frozen):
    """A call's answer. Its times are always present: null where the call never started."""

    role: Literal["tool"] = "tool"
    content: str
    call_id: str
    tool: str
    status: ToolStatus
    started_at: str | None
    ended_at: str | None
    turn: int | None = None

    @model_serializer(mode="wrap")
    def _keep_null_times(
        self, dump: Callable[[HistoryTool], dict[str, Any]], info: SerializationInfo
    ) -> dict[str, Any]:
        # Responses drop nulls (optional fields are left out); these nulls say something.
        times = {"started_at": self.started_at, "ended_at": self.ended_at}
        return {**dump(self), **times, "turn": self.turn}


HistoryMessage = Annotated[
    HistoryUser | HistoryAssistant | HistoryTool, Field(discriminator="role")
]


class Checkpoint(Frozen):
    """A turn that changed files: which (relative to the workspace), and when it began."""

    turn: int
    files: list[str]
    created: str
    skipped: list[str] | None = None  # files too large to be kept (checkpoint.max_file_mb)


class RewindConflict(Frozen):
    path: str
    reason: str


class Rewound(Frozen):
    """What ``tether.rewind`` did: files put back as they were before the turn, files the
    turn created and that were removed, files left as they are (and why)."""

    session: str
    turn: int
    what: RewindWhat
    restored: list[str] = Field(default_factory=list)
    conflicts: list[RewindConflict] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)  # what could not be taken back, and why


class Rewind(Rewound):
    """A rewind as the history shows it: where it came in the transcript."""

    before: int  # index into the history's messages: it came after the messages before it
    created: str


class History(Frozen):
    messages: list[HistoryMessage] = Field(default_factory=list)
    pending: list[PendingCall] = Field(default_factory=list)
    stats: Stats = Stats()
    compactions: list[Compaction] = Field(default_factory=list)
    checkpoints: list[Checkpoint] = Field(default_factory=list)
    rewinds: list[Rewind] = Field(default_factory=list)


def message_to_wire(message: Message) -> HistoryMessage:
    """A message as the contract shows it in ``tether.history``."""
    match message:
        case UserMessage(content=content):
            return HistoryUser(content=content)
        case AssistantMessage(content=content, tool_calls=calls):
            wired = [WireCall(id=c.id, name=c.name, arguments=c.parsed_arguments()) for c in calls]
            return HistoryAssistant(content=content, tool_calls=wired or None)
        case ToolMessage(result=r):
            return HistoryTool(
                content=r.content,
                call_id=r.call_id,
                tool=r.tool,
                status=r.status,
                started_at=iso(r.started_at),
                ended_at=iso(r.ended_at),
            )
