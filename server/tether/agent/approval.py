"""Approval: who decides whether an approval-requiring call runs, and how it is remembered.

The ``Person`` seam is the human at the editor (a dialog in the LSP front, a prompt in
``tether ask``, a script in tests). The ``Gate`` asks them only when nothing already
decides: a decision recorded on the call (``tether.approve`` / ``tether.deny``, or a
dismissed dialog, which parks the call until someone decides), then a remembered rule that
denies, then the person's policy (``unasked``), then a remembered rule that allows.

A remembered rule allows (the person's "Allow always") or denies ("Deny always", which only
the ACP front offers, as ``reject_always``). A call a deny rule covers is denied unasked,
and the model reads which rule of the person's denied it, so that it does not try again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal, Protocol

from tether.errors import TetherError
from tether.models import Frozen, PendingCall, RecordedChoice, Scope, Verdict
from tether.store import Store
from tether.store.rules import Rule
from tether.tools.base import Preview, RuleKey

log = logging.getLogger(__name__)
# "always": allow, and remember a rule that allows; "never": deny, and remember one that denies.
Answer = Literal["allow", "always", "deny", "never"]


class Allow(Frozen):
    kind: Literal["allow"] = "allow"
    by: str = "person"
    by_rule: bool = False  # nobody saw this very call: a rule or the policy allowed it


class Deny(Frozen):
    kind: Literal["deny"] = "deny"
    reason: str = "the person denied it"
    by: str = "person"


class Applied(Frozen):
    """The person applied the call's change in the editor themselves (a code action)."""

    kind: Literal["applied"] = "applied"
    by: str = "person"


Decision = Allow | Deny | Applied
PREVIEW_BUDGET = 2000  # characters of a call's preview a dialog shows


class Question(Frozen):
    """What the person is asked about one call."""

    call: PendingCall
    preview: str  # what will happen: whole, or its head and tail saying what is left out
    always: str | None  # what "Allow always" (or "Deny always") remembers; None: not offered


class Person(Protocol):
    def can_ask(self) -> bool:
        """Whether a dialog can reach the person now; if not, calls park at once."""
        ...

    async def ask(self, session: str, question: Question) -> Answer | None:
        """Allow, allow always or deny always (only when offered), deny; None when
        dismissed."""
        ...

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        """A reply asks for ``asked`` calls beyond the turn's ``budget``: may it grow?"""
        ...

    async def allow_server(self, name: str, shown: str) -> bool:
        """May the workspace's ``.mcp.json`` server ``name`` start (``shown``: its command
        line)? False when dismissed, or when no dialog can reach the person."""
        ...


class Nobody:
    """No one to ask: approval-requiring calls park until ``tether.approve``."""

    def can_ask(self) -> bool:
        return False

    async def ask(self, session: str, question: Question) -> Answer | None:
        return None

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        return False

    async def allow_server(self, name: str, shown: str) -> bool:
        return False


class Gate:
    def __init__(self, store: Store, person: Person, workspace: Path) -> None:
        self.store = store
        self.person = person
        self.workspace = str(workspace)

    async def decide(
        self,
        at: tuple[str, int, int],
        call: PendingCall,
        preview: Callable[[int], Awaitable[Preview]],
        rule_key: RuleKey | None,
        recorded: RecordedChoice | None,
        unasked: str | None = None,
    ) -> Decision | None:
        """The decision on the call at ``at`` (session, reply seq, call index): recorded,
        by a rule that denies, by the person's policy (``unasked`` says which), by a rule
        that allows, or the person's answer; None parks it."""
        session, seq, idx = at
        match recorded:
            case RecordedChoice(decision="applied"):
                return Applied()
            case RecordedChoice(decision="allow"):
                return Allow()
            case RecordedChoice(decision="deny", reason=reason):
                return Deny(reason=reason or Deny().reason)
        rule = self._rule(session, call.tool, rule_key)
        if rule is not None and rule.verdict == "deny":  # "never" outweighs any policy
            return Deny(reason=denied_by(rule), by=f"rule: {rule.words} ({rule.scope})")
        if unasked is not None and recorded is None:
            return Allow(by=unasked, by_rule=True)  # nobody saw this call either
        if rule is not None:
            return Allow(by=f"rule: {rule.words} ({rule.scope})", by_rule=True)
        if recorded is not None or not self.person.can_ask():
            return None  # dismissed before: it waits for a decision, and is not asked again
        shown = await preview(PREVIEW_BUDGET)
        # Nothing is remembered from a call the person could not see whole.
        always = rule_key.words if rule_key is not None and shown.whole else None
        question = Question(call=call, preview=shown.text, always=always)
        answer = await self.person.ask(session, question)
        if answer is None:
            dismissed = RecordedChoice(decision="dismissed")
            self.store.transcript.record_choice(session, seq, idx, dismissed)
            return None
        # Only what was offered is remembered (a client may send "always" or "never" anyway).
        offered = rule_key if always is not None else None
        if answer == "never" and always is not None and offered is not None:
            self.remember("workspace", session, call.tool, offered, "deny")
            return Deny(reason=never(always))
        if answer in ("deny", "never"):
            return Deny()
        if answer == "always" and offered is not None:
            self.remember("workspace", session, call.tool, offered)
        return Allow()

    async def extend_budget(self, session: str, budget: int, over: int) -> bool:
        """Whether the person lets a reply that goes ``over`` the turn's budget run whole."""
        try:
            return await self.person.extend_budget(session, budget, over)
        except TetherError as exc:
            log.warning("the budget question failed: %s", exc)
            return False

    def remember(
        self,
        scope: Scope,
        session: str,
        tool: str,
        rule_key: RuleKey,
        verdict: Verdict = "allow",
    ) -> str:
        scope_id = session if scope == "session" else self.workspace
        key, words = rule_key.key, rule_key.words
        return self.store.rules.add(scope, scope_id, tool, key, words, verdict).words

    def _rule(self, session: str, tool: str, rule_key: RuleKey | None) -> Rule | None:
        if rule_key is None:
            return None
        return self.store.rules.match(session, self.workspace, tool, rule_key.key)


def never(words: str) -> str:
    """What the model reads of a call the person denied "always" (``words``: the rule)."""
    return f"the person denied it, and every call like it from now on ({words}): do not try again"


def denied_by(rule: Rule) -> str:
    """What the model reads of a call a remembered rule denied: whose rule, what it covers."""
    where = "this session" if rule.scope == "session" else "this workspace"
    return (
        f"a rule the person remembered denies it, for {where}: {rule.words}. "
        "Every call like it is denied without asking: do not try it again"
    )
