"""Resolving one reply's tool calls as a unit (see shared/spec/dispatch.md).

``plan`` decides, purely, which calls run and how (``agent/plan.py``); this module
carries the plan out. Every call gets exactly one answer (``Answers``), committed as
it is known and read back in call order. The outcome tells the loop what follows:
``Continue`` with the turn's counts, ``Parked`` on calls that wait for the person,
or ``Stopped`` by the budget or the repeat guard. Cancellation is not an outcome: it
propagates, and one ``finally`` answers every call still open.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tether.agent.answers import Answers
from tether.agent.approval import Allow, Applied, Decision, Deny
from tether.agent.env import TurnEnv
from tether.agent.events import ApprovalState, ApprovalUpdate, ToolCallUpdate
from tether.agent.output import LiveOutput
from tether.agent.plan import Ask, Counts, Kind, Plan, Reads, Segment, Step, budget_spent, plan
from tether.agent.prepare import Call, Invalid, Prepared, prepare, summary
from tether.errors import ToolError
from tether.models import PendingCall, ToolStatus, shortened
from tether.store import Store, StoredReply
from tether.tools.base import Gated, Preview, RunsUnasked, Sandboxable, TellsItsChanges, Tool
from tether.tools.toolbox import Toolbox, toolbox

log = logging.getLogger(__name__)
CANCELLED = "the turn was cancelled"
UPDATE_ARGUMENT_CHARS = 4000  # of each string argument a `tool_call` update carries


@dataclass(frozen=True)
class Continue:
    counts: Counts


@dataclass(frozen=True)
class Parked:
    pending: list[PendingCall]
    waiting: frozenset[int]  # every call of the reply left open until it resumes


@dataclass(frozen=True)
class Stopped:
    reason: str


Outcome = Continue | Parked | Stopped


class Dispatcher:
    """One per server: its semaphore bounds the read-only calls running at once across
    every turn (``tools.max_concurrency``)."""

    def __init__(
        self,
        tools: Sequence[Tool[Any]] | Toolbox,
        store: Store,
        concurrency: Callable[[], int],
    ) -> None:
        self.tools = toolbox(tools)  # shared with the service: tools added later run too
        self.store = store
        self.concurrency = concurrency  # read at each call: a new setting applies at once
        self._size = 0
        self._semaphore = asyncio.Semaphore()

    def _limit(self) -> asyncio.Semaphore:
        if (size := self.concurrency()) != self._size:
            # Calls running under the old limit finish under it.
            self._size, self._semaphore = size, asyncio.Semaphore(size)
        return self._semaphore

    def prepare(self, reply: StoredReply, env: TurnEnv) -> list[Call]:
        tools = self.tools.view(env.session)  # another session's own tools are unknown here
        return [prepare(tools, env.ctx, idx, call) for idx, call in enumerate(reply.calls)]

    async def dispatch(self, env: TurnEnv, reply: StoredReply, counts: Counts) -> Outcome:
        """Answer every call of ``reply``, or leave the ones that wait parked."""
        calls = self.prepare(reply, env)
        answers = Answers(self.store, reply, env.updates)
        for c in calls:
            if answers.is_open(c.idx):
                env.updates.send(_call_update(env, c))
        why, waiting = CANCELLED, frozenset[int]()
        try:
            # Asked once per reply, before anything runs; the answer only adds room.
            over = counts.over(len(calls))
            if over and await env.gate.extend_budget(env.session, counts.budget, over):
                counts = counts.extended(max(env.settings.tool_budget, over))
            steps = [Step(c.key, _kind(c)) for c in calls]
            planned = plan(steps, counts, env.settings.repeat_limit)
            outcome = await self._carry_out(env, reply, calls, planned, answers)
            why = planned.stop or "it was not reached"
            if isinstance(outcome, Parked):
                waiting = outcome.waiting
            return outcome
        except Exception:
            why = "tether failed while answering this reply"
            raise
        finally:
            answers.close(why, keep=waiting)

    async def _carry_out(
        self, env: TurnEnv, reply: StoredReply, calls: list[Call], planned: Plan, answers: Answers
    ) -> Outcome:
        valid = {c.idx: c for c in calls if isinstance(c, Prepared)}
        invalid = {c.idx: c for c in calls if isinstance(c, Invalid)}
        for idx in planned.invalid:
            answers.answer(idx, "error", invalid[idx].reason)
        for idx in planned.over_budget:
            answers.answer(idx, "not_executed", f"not executed: {budget_spent(planned.counts)}.")
        for at, segment in enumerate(planned.segments):
            if isinstance(segment, Reads):
                todo = [valid[i] for i in segment.calls if answers.is_open(i)]
                if segment.together:
                    await asyncio.gather(*(self._execute(env, c, answers) for c in todo))
                else:
                    for c in todo:
                        await self._execute(env, c, answers)
            elif answers.is_open(segment.call) and not await self._decide(
                env, reply, valid[segment.call], answers
            ):
                return _parked(env, planned.segments[at:], valid, answers)
        return Stopped(planned.stop) if planned.stop else Continue(planned.counts)

    async def _decide(
        self, env: TurnEnv, reply: StoredReply, c: Prepared[Any], answers: Answers
    ) -> bool:
        """Ask about an approval-requiring call and act on the answer; False: it parks."""
        pending = c.pending(env.ctx)
        tool, params = c.tool, c.params
        rule_key = tool.rule_key(params, env.ctx) if isinstance(tool, Gated) else None
        unasked = tool.unasked(params, env.ctx) if isinstance(tool, RunsUnasked) else None

        async def preview(budget: int) -> Preview:
            # Only when the person is asked: a recorded decision needs none (and a patch
            # the person already applied in the editor could no longer be planned).
            if isinstance(tool, Gated):
                return await tool.preview(params, env.ctx, budget)
            return Preview(text=f"{pending.summary} (outside the workspace, or inside .git/)")

        _approval(env, c, pending, "pending")
        at = (reply.session, reply.seq, c.idx)
        try:
            decision: Decision | None = await env.gate.decide(
                at, pending, preview, rule_key, reply.choices.get(c.idx), unasked
            )
        except ToolError as exc:
            answers.answer(c.idx, "error", str(exc))  # nothing to ask about: it cannot run
            return True
        match decision:
            case None:
                return False
            case Allow():
                _approval(env, c, pending, "allowed")
                if env.checkpoints is not None:  # before the turn's first change runs
                    await env.checkpoints.before_change(env.session, tool, params, env.ctx)
                await self._execute(env, c, answers, decision)
            case Applied(by=by):
                _approval(env, c, pending, "allowed")
                done = f"the person applied this change in the editor themselves: {pending.summary}"
                answers.answer(c.idx, "ok", done, decided_by=by)
            case Deny(reason=reason, by=by):
                _approval(env, c, pending, "denied")
                answers.answer(c.idx, "denied", f"denied: {reason}", decided_by=by)
        return True

    async def _execute(
        self, env: TurnEnv, c: Prepared[Any], answers: Answers, allowed: Allow | None = None
    ) -> None:
        async with self._limit():
            answers.start(c.idx)
            status: ToolStatus = "ok"
            by_rule = allowed is not None and allowed.by_rule
            live = LiveOutput(env.updates, env.session, c.call.id)
            ctx = replace(env.ctx, approved=allowed is not None, by_rule=by_rule, output=live.write)
            try:
                content = await c.tool.run(c.params, ctx)
            except asyncio.CancelledError:
                answers.partial[c.idx] = live.tail  # the answer the turn's end gives it
                raise
            except ToolError as exc:
                content, status = str(exc), "error"
            except Exception as exc:  # a bug in one tool must not end the turn or its siblings
                log.exception("tool %s failed", c.call.name)
                content, status = f"{c.call.name} failed unexpectedly: {exc!r}", "error"
            finally:
                live.close()
                if allowed is not None and not isinstance(c.tool, TellsItsChanges):
                    ctx.index.unsure()  # it may have changed files: searches catch up first
            sandboxed = c.tool.sandboxed(ctx) if isinstance(c.tool, Sandboxable) else None
            by = allowed.by if allowed else None
            answers.answer(c.idx, status, content, decided_by=by, sandboxed=sandboxed)


def _kind(c: Call) -> Kind:
    if isinstance(c, Invalid):
        return "invalid"
    return "read" if c.read_only else "gated"


def _parked(
    env: TurnEnv, rest: Sequence[Segment], valid: dict[int, Prepared[Any]], answers: Answers
) -> Parked:
    """From the park point on, every open call waits: the approval-requiring ones for a
    decision, the reads among them for the resume that runs them."""
    waiting = [i for s in rest for i in (s.calls if isinstance(s, Reads) else (s.call,))]
    waiting = [i for i in waiting if answers.is_open(i)]
    asks = [s.call for s in rest if isinstance(s, Ask) and answers.is_open(s.call)]
    return Parked(pending=[valid[i].pending(env.ctx) for i in asks], waiting=frozenset(waiting))


def _call_update(env: TurnEnv, c: Call) -> ToolCallUpdate:
    return ToolCallUpdate(
        session=env.session,
        call_id=c.call.id,
        tool=c.call.name,
        arguments=shortened(c.call.parsed_arguments(), UPDATE_ARGUMENT_CHARS),
        summary=summary(c, env.ctx),
    )


def _approval(env: TurnEnv, c: Prepared[Any], pending: PendingCall, state: ApprovalState) -> None:
    env.updates.send(
        ApprovalUpdate(
            session=env.session,
            call_id=c.call.id,
            tool=c.call.name,
            summary=pending.summary,
            decision=state,
        )
    )
