"""What a turn tells the outside world as it happens (``tether/update``)."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from tether.models import Frozen, SessionStatus, ToolStatus


class TextUpdate(Frozen):
    kind: Literal["text"] = "text"
    session: str
    text: str


class ToolCallUpdate(Frozen):
    kind: Literal["tool_call"] = "tool_call"
    session: str
    call_id: str
    tool: str
    arguments: dict[str, Any] | str
    summary: str


class ToolResultUpdate(Frozen):
    kind: Literal["tool_result"] = "tool_result"
    session: str
    call_id: str
    tool: str
    status: ToolStatus
    content: str
    started_at: str | None = None  # ISO 8601 UTC, as in the history
    ended_at: str | None = None


ApprovalState = Literal["pending", "allowed", "denied"]


class ApprovalUpdate(Frozen):
    kind: Literal["approval"] = "approval"
    session: str
    call_id: str
    tool: str
    summary: str
    decision: ApprovalState


class StatusUpdate(Frozen):
    kind: Literal["status"] = "status"
    session: str
    status: SessionStatus
    detail: str | None = None


Update = TextUpdate | ToolCallUpdate | ToolResultUpdate | ApprovalUpdate | StatusUpdate


class Updates(Protocol):
    def send(self, update: Update) -> None: ...


class NoUpdates:
    def send(self, update: Update) -> None:
        pass
