"""Approval: who decides whether an approval-requiring call runs, and how it is remembered.

The ``Person`` seam is the human at the editor (a dialog in the LSP front, a prompt in
``tether ask``, a script in tests). The ``Gate`` asks them only when nothing already
decides: a decision recorded on the call (``tether.approve`` / ``tether.deny``, or a
dismissed dialog, which parks the call until someone decides), then a remembered rule.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Literal, Protocol

from tether.models import Frozen, PendingCall, RecordedDecision
from tether.store import Store
from tether.tools.base import Memory

Answer = Literal["allow", "always", "deny"]


class Allow(Frozen):
    kind: Literal["allow"] = "allow"
    by: str = "person"


class Deny(Frozen):
    kind: Literal["deny"] = "deny"
    reason: str = "the person denied it"
    by: str = "person"


class Applied(Frozen):
    """The person applied the call's change in the editor themselves (a code action)."""

    kind: Literal["applied"] = "applied"
    by: str = "person"


Decision = Allow | Deny | Applied


class Person(Protocol):
    def can_ask(self) -> bool:
        """Whether a dialog can reach the person now; if not, calls park at once."""
        ...

    async def ask(self, session: str, call: PendingCall, preview: str) -> Answer | None:
        """Allow, allow always, deny; None when the question was dismissed."""
        ...

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        """A reply asks for ``asked`` calls beyond the turn's ``budget``: may it grow?"""
        ...


class Nobody:
    """No one to ask: approval-requiring calls park until ``tether.approve``."""

    def can_ask(self) -> bool:
        return False

    async def ask(self, session: str, call: PendingCall, preview: str) -> Answer | None:
        return None

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        return False


Recorded = Mapping[str, tuple[RecordedDecision | None, str | None]]  # call id -> (decision, reason)


class Gate:
    def __init__(self, store: Store, person: Person, workspace: Path) -> None:
        self.store = store
        self.person = person
        self.workspace = str(workspace)

    async def decide(
        self,
        session: str,
        seq: int,
        call: PendingCall,
        preview: Callable[[], Awaitable[str]],
        memory: Memory | None,
        recorded: Recorded,
    ) -> Decision | None:
        decision, reason = recorded.get(call.call_id, (None, None))
        if decision == "applied":
            return Applied()
        if decision == "allow":
            return Allow()
        if decision == "deny":
            return Deny(reason=reason or Deny().reason)
        if memory is not None and (
            rule := self.store.rules.match(session, self.workspace, call.tool, memory.key)
        ):
            return Allow(by=f"rule: {rule.words} ({rule.scope})")
        if decision == "dismissed" or not self.person.can_ask():
            return None
        answer = await self.person.ask(session, call, await preview())
        if answer is None:
            # Dismissed: parked until someone decides, and not asked again.
            self.store.decide(session, seq, call.call_id, "dismissed", None)
            return None
        if answer == "deny":
            return Deny()
        if answer == "always" and memory is not None:
            self.remember("workspace", session, call.tool, memory)
        return Allow()

    def remember(
        self, scope: Literal["session", "workspace"], session: str, tool: str, memory: Memory
    ) -> str:
        scope_id = session if scope == "session" else self.workspace
        return self.store.rules.add(scope, scope_id, tool, memory.key, memory.words).words
