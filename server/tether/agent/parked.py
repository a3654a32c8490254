"""A parked reply: a session whose turn waits for the person, and what waits in it.

Parking needs no state of its own (``shared/spec/dispatch.md``): a session whose
status is ``awaiting_approval`` has a last reply with calls left unanswered, and
decisions recorded on them since. Everything asked of a parked reply is answered
here, from one load: what waits (``waiting``), recording a decision (``decide``),
and giving up on it (``settle``); ``planned_edit`` gives the edit a waiting patch
would make, whether it waits parked or on its open dialog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tether.agent.answers import Answers
from tether.agent.events import Updates
from tether.agent.prepare import Prepared, prepare
from tether.errors import NotFound, NothingWaiting, Refused, ToolError
from tether.models import PARKED, PendingCall, RecordedChoice, SessionInfo
from tether.store import Store, StoredReply
from tether.tools.base import EditsFiles, FileEdit, Gated, RuleKey, Tool, ToolContext


@dataclass(frozen=True)
class Waiting:
    """One call that waits for a decision."""

    call: Prepared[Any]
    pending: PendingCall
    rule_key: RuleKey | None  # what an "allow always" of it would remember


class ParkedReply:
    def __init__(self, store: Store, reply: StoredReply, waiting: list[Waiting]) -> None:
        self.store = store
        self.reply = reply
        self.waiting = waiting

    @classmethod
    def load(
        cls, store: Store, info: SessionInfo, tools: Mapping[str, Tool[Any]], ctx: ToolContext
    ) -> ParkedReply | None:
        """The session's parked reply; None unless its turn waits for approval."""
        if info.status != PARKED:
            return None
        reply = store.transcript.last_reply(info.id)
        if reply is None or reply.complete:
            return None
        waiting = []
        for idx, call in enumerate(reply.calls):
            c = prepare(tools, ctx, idx, call)
            if idx in reply.answered or not isinstance(c, Prepared) or c.read_only:
                continue
            key = c.tool.rule_key(c.params, ctx) if isinstance(c.tool, Gated) else None
            waiting.append(Waiting(c, c.pending(ctx), key))
        return cls(store, reply, waiting)

    @property
    def session(self) -> str:
        return self.reply.session

    def pending(self) -> list[PendingCall]:
        return [w.pending for w in self.waiting]

    def chosen(self, call_ids: Sequence[str] | None) -> list[Waiting]:
        """The waiting calls named by id (all of them when None)."""
        if not self.waiting:
            raise NothingWaiting(self.session)
        if call_ids is None:
            return list(self.waiting)
        chosen = []
        for call_id in call_ids:
            named = [w for w in self.waiting if w.pending.call_id == call_id]
            if not named:
                raise NotFound(f"no pending call {call_id} in session {self.session!r}")
            if len(named) > 1:
                # The model gave two calls one id: a decision must never reach the wrong one.
                raise Refused(
                    f"call id {call_id} names {len(named)} waiting calls of session "
                    f"{self.session!r}; decide them all at once (give no call ids)"
                )
            chosen.append(named[0])
        return chosen

    def decide(self, call_ids: Sequence[str] | None, choice: RecordedChoice) -> list[Waiting]:
        """Record ``choice`` on the named waiting calls; the resumed reply acts on it."""
        chosen = self.chosen(call_ids)
        choices = dict(self.reply.choices)
        for w in chosen:
            self.store.transcript.record_choice(self.session, self.reply.seq, w.call.idx, choice)
            choices[w.call.idx] = choice
        self.reply = self.reply.model_copy(update={"choices": choices})
        return chosen

    def settle(self, why: str, updates: Updates) -> None:
        """Give up on the reply: every call it left open is answered as never run."""
        Answers(self.store, self.reply, updates).close(why)


async def planned_edit(
    store: Store, session: str, call_id: str, tools: Mapping[str, Tool[Any]], ctx: ToolContext
) -> FileEdit:
    """The file edit a waiting call would make (its dialog open, or parked), for the editor
    to preview; ``Refused`` says why there is none."""
    reply = store.transcript.last_reply(session)
    waiting = [
        prepare(tools, ctx, idx, call)
        for idx, call in enumerate(reply.calls if reply else ())
        if call.id == call_id and reply is not None and idx not in reply.answered
    ]
    if not waiting:
        raise NotFound(f"no pending call {call_id} in session {session!r}")
    c = waiting[0]
    if not isinstance(c, Prepared) or not isinstance(c.tool, EditsFiles):
        raise Refused(f"call {call_id} is a {c.call.name}, not a file edit")
    try:
        return await c.tool.plan(c.params, ctx)
    except ToolError as exc:
        raise Refused(f"call {call_id} does not apply to the file as it is now: {exc}") from None
