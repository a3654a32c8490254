"""The ``Approver`` seam: who decides whether an approval-requiring call runs."""

from __future__ import annotations

from typing import Literal, Protocol

from tether.models import Frozen, PendingCall


class Allow(Frozen):
    kind: Literal["allow"] = "allow"
    by: str = "person"


class Deny(Frozen):
    kind: Literal["deny"] = "deny"
    reason: str = "denied by the person"
    by: str = "person"


Decision = Allow | Deny


class Approver(Protocol):
    """The person at the editor, as far as the agent needs to ask them anything."""

    async def decide(self, session: str, call: PendingCall) -> Decision | None:
        """Allow, deny, or None to park the call until someone decides."""
        ...

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        """A reply asks for ``asked`` calls beyond the turn's ``budget``: may it grow?"""
        ...


class NoApprovals:
    """Until approvals reach the editor, approval-requiring calls are refused, saying why."""

    async def decide(self, session: str, call: PendingCall) -> Decision | None:
        return Deny(
            reason=(
                f"{call.tool} needs the person's approval ({call.summary}), and this version "
                "of tether cannot ask for it yet, so it was not run. Stay inside the workspace."
            ),
            by="policy",
        )

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        return False
