"""What a turn tells the outside world as it happens (``tether/update``)."""

from __future__ import annotations

from typing import Any, Literal, Protocol

from tether.history import Rewound
from tether.models import Frozen, SessionStatus, ToolStatus, TurnResult


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
    result: TurnResult | None = None  # on the update that ends a turn (contract v2)


def ended(result: TurnResult) -> StatusUpdate:
    """The status update that ends a turn: it carries the turn's result (contract v2)."""
    return StatusUpdate(
        session=result.session, status=result.status, detail=result.error, result=result
    )


class OutputUpdate(Frozen):
    """A delta of a running command's output, as it comes (contract v2)."""

    kind: Literal["output"] = "output"
    session: str
    call_id: str
    text: str


class UsageUpdate(Frozen):
    """What the provider reported of one request: the context the model saw (v2)."""

    kind: Literal["usage"] = "usage"
    session: str
    input_tokens: int
    output_tokens: int
    context_tokens: int
    context_window: int | None = None


class RewindUpdate(Rewound):
    """A turn was rewound (``tether.rewind``): what was put back, removed, left as it is."""

    kind: Literal["rewind"] = "rewind"


Update = (
    TextUpdate
    | ToolCallUpdate
    | ToolResultUpdate
    | ApprovalUpdate
    | StatusUpdate
    | OutputUpdate
    | UsageUpdate
    | RewindUpdate
)


class Updates(Protocol):
    def send(self, update: Update) -> None: ...


class NoUpdates:
    def send(self, update: Update) -> None:
        pass
