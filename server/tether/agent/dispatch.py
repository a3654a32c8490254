"""Resolving one reply's tool calls as a unit (see shared/spec/dispatch.md).

Every call gets exactly one answer. Answers are committed as calls finish (so a
crash loses nothing that finished) and read back in call order, which is the
order the model is sent them. The reply is split into segments: a run of
read-only calls (concurrent when it has two or more and no duplicates), or one
approval-requiring call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from itertools import groupby

from tether.agent.approval import Allow, Applied, Gate, Recorded
from tether.agent.calls import Call, TurnState, prepare
from tether.agent.events import (
    ApprovalState,
    ApprovalUpdate,
    ToolCallUpdate,
    ToolResultUpdate,
    Updates,
)
from tether.config import Settings
from tether.errors import TetherError, ToolError
from tether.models import PendingCall, ToolCall, ToolResult, ToolStatus, iso, now
from tether.store import Store
from tether.store.sessions import Parked
from tether.tools.base import EditsFiles, FileEdit, Gated, Memory, Tool, ToolContext

log = logging.getLogger(__name__)
UPDATE_PREVIEW_CHARS = 4000


class Dispatcher:
    def __init__(
        self,
        tools: Sequence[Tool],
        ctx: ToolContext,
        store: Store,
        gate: Gate,
        settings: Settings,
    ) -> None:
        self.tools = {tool.name: tool for tool in tools}
        self.ctx = ctx
        self.store = store
        self.gate = gate
        self.limit = asyncio.Semaphore(settings.tools.max_concurrency)
        self.budget_step = settings.turn.tool_budget

    async def dispatch(
        self,
        session: str,
        seq: int,
        calls: Sequence[ToolCall],
        turn: TurnState,
        updates: Updates,
        parked: Parked | None = None,
    ) -> None:
        """Answer every call of the reply stored at ``seq``; may stop or park the turn.

        ``parked``: the same reply, parked earlier (maybe by another process), now resumed
        at its park point with the decisions recorded since.
        """
        run = _Run(self, session, seq, updates, parked)
        prepared = [prepare(self.tools, self.ctx, idx, call) for idx, call in enumerate(calls)]
        for c in prepared:
            if c.idx in run.answered:
                continue
            updates.send(
                ToolCallUpdate(
                    session=session,
                    call_id=c.call.id,
                    tool=c.call.name,
                    arguments=c.call.parsed_arguments(),
                    summary=c.pending(self.ctx).summary,
                )
            )
        try:
            await run.resolve(prepared, turn)
        except asyncio.CancelledError:
            for c in prepared:
                if c.idx not in run.answered:
                    status: ToolStatus = "interrupted" if c.started_at else "not_executed"
                    run.answer(c, status, f"{status}: the turn was cancelled by the person.")
            raise

    def waiting(self, parked: Parked) -> list[tuple[PendingCall, Memory | None]]:
        """The parked reply's approval-requiring calls that have no answer yet."""
        waiting: list[tuple[PendingCall, Memory | None]] = []
        for idx, call in enumerate(parked.calls):
            c = prepare(self.tools, self.ctx, idx, call)
            if idx in parked.answered or c.invalid is not None or c.read_only:
                continue
            memory = c.tool.remember(c.params, self.ctx) if isinstance(c.tool, Gated) else None
            waiting.append((c.pending(self.ctx), memory))
        return waiting

    async def planned_edit(self, parked: Parked, call_id: str) -> FileEdit | None:
        """The file edit a pending call would make, for the editor to preview."""
        for idx, call in enumerate(parked.calls):
            c = prepare(self.tools, self.ctx, idx, call)
            if call.id == call_id and c.invalid is None and isinstance(c.tool, EditsFiles):
                try:
                    return await c.tool.plan(c.params, self.ctx)
                except ToolError:
                    return None
        return None


class _Run:
    """One reply's dispatch: which calls are answered, and how."""

    def __init__(
        self,
        dispatcher: Dispatcher,
        session: str,
        seq: int,
        updates: Updates,
        parked: Parked | None,
    ) -> None:
        self.d = dispatcher
        self.session = session
        self.seq = seq
        self.updates = updates
        self.resumed = parked is not None
        self.answered: set[int] = set(parked.answered if parked else ())
        self.recorded: Recorded = parked.decisions if parked else {}
        self.cancel_after = False
        self.parked = False

    async def resolve(self, prepared: list[Call], turn: TurnState) -> None:
        valid: list[Call] = []
        stop_at: int | None = None
        if not self.resumed:
            await self.checkpoint(len(prepared), turn)
        spent = f"the tool budget of {turn.budget} calls for this turn is spent"
        for c in prepared:
            # Budget and guard are settled in call order before anything starts.
            turn.used += 1
            if turn.used > turn.budget:
                self.answer(c, "not_executed", f"not executed: {spent}.")
                continue
            turn.seen[c.key] += 1
            if stop_at is None and turn.seen[c.key] >= turn.repeat_limit:
                stop_at = c.idx
            if c.invalid is not None:
                self.answer(c, "error", c.invalid)
            else:
                valid.append(c)
        for read_only, group in groupby(valid, key=lambda c: c.read_only):
            run = list(group)
            segments = [run] if read_only else [[c] for c in run]
            for segment in segments:
                # A cancel during the budget question spares only the reads that fit.
                if turn.stop_reason or self.parked or (self.cancel_after and not read_only):
                    break
                if stop_at is not None and segment[0].idx >= stop_at:
                    turn.stop_reason = _repeat_reason(turn)
                    break
                if read_only:
                    await self.reads(segment, stop_at)
                else:
                    await self.approval(segment[0], turn)
                if stop_at is not None and segment[-1].idx >= stop_at:
                    turn.stop_reason = _repeat_reason(turn)
        if self.cancel_after:
            raise asyncio.CancelledError
        if self.parked:
            # Parked calls stay unanswered: they are pending, not lost.
            ctx = self.d.ctx
            turn.pending = [
                c.pending(ctx) for c in valid if not c.read_only and c.idx not in self.answered
            ]
            return
        if turn.used > turn.budget:
            turn.stop_reason = turn.stop_reason or spent
        for c in valid:
            if c.idx not in self.answered:
                self.answer(c, "not_executed", f"not executed: {turn.stop_reason}.")

    async def checkpoint(self, calls: int, turn: TurnState) -> None:
        """Ask once per reply, before anything starts, whether a crossed budget may grow.

        The answer only adds room: the calls that fit run whatever it is, even if the
        question is dismissed or fails.
        """
        over = turn.used + calls - turn.budget
        if over <= 0:
            return
        try:
            extend = await self.d.gate.person.extend_budget(self.session, turn.budget, over)
        except TetherError as exc:
            log.warning("the budget checkpoint failed: %s", exc)
            extend = False
        except asyncio.CancelledError:
            # The calls that fit were already granted: they run, then the cancel lands.
            self.cancel_after = True
            extend = False
        if extend:
            turn.budget += max(self.d.budget_step, over)

    async def reads(self, segment: list[Call], stop_at: int | None) -> None:
        segment = [c for c in segment if c.idx not in self.answered]
        concurrent = len(segment) > 1 and len({c.key for c in segment}) == len(segment)
        if concurrent:
            await asyncio.gather(*(self.execute(c) for c in segment))
            return
        for c in segment:
            if stop_at is not None and c.idx >= stop_at:
                return
            await self.execute(c)

    async def approval(self, c: Call, turn: TurnState) -> None:
        if c.idx in self.answered:
            return
        assert c.tool is not None
        ctx = self.d.ctx
        pending = c.pending(ctx)
        tool, params = c.tool, c.params
        memory = tool.remember(params, ctx) if isinstance(tool, Gated) else None

        async def preview() -> str:
            # Only when the person is asked: a recorded decision needs none (and a patch
            # the person already applied in the editor could no longer be planned).
            if isinstance(tool, Gated):
                return await tool.preview(params, ctx)
            return f"{pending.summary} (outside the workspace)"

        self.approval_update(c, pending, "pending")
        try:
            decision = await self.d.gate.decide(
                self.session, self.seq, pending, preview, memory, self.recorded
            )
        except ToolError as exc:
            self.answer(c, "error", str(exc))  # nothing to ask about: it cannot run as given
            return
        if decision is None:
            self.parked = True
        elif isinstance(decision, Allow):
            self.approval_update(c, pending, "allowed")
            await self.execute(c, decided_by=decision.by)
        elif isinstance(decision, Applied):
            self.approval_update(c, pending, "allowed")
            done = f"the person applied this change in the editor themselves: {pending.summary}"
            self.answer(c, "ok", done, decided_by=decision.by)
        else:
            self.approval_update(c, pending, "denied")
            self.answer(c, "denied", f"denied: {decision.reason}", decided_by=decision.by)

    def approval_update(self, c: Call, pending: PendingCall, decision: ApprovalState) -> None:
        self.updates.send(
            ApprovalUpdate(
                session=self.session,
                call_id=c.call.id,
                tool=c.call.name,
                summary=pending.summary,
                decision=decision,
            )
        )

    async def execute(self, c: Call, decided_by: str | None = None) -> None:
        assert c.tool is not None
        async with self.d.limit:
            c.started_at = started = now()
            self.d.store.mark_started(self.session, self.seq, c.idx, started)
            status: ToolStatus = "ok"
            try:
                content = await c.tool.run(c.params, self.d.ctx)
            except ToolError as exc:
                status, content = "error", str(exc)
            except asyncio.CancelledError:
                self.answer(c, "interrupted", "interrupted: the turn was cancelled while it ran.")
                raise
            except Exception as exc:  # a bug in one tool must not end the turn or its siblings
                log.exception("tool %s failed", c.call.name)
                status, content = "error", f"{c.call.name} failed unexpectedly: {exc!r}"
            self.answer(c, status, content, decided_by=decided_by)

    def answer(
        self, c: Call, status: ToolStatus, content: str, decided_by: str | None = None
    ) -> None:
        if c.idx in self.answered:
            return
        result = ToolResult(
            call_id=c.call.id,
            tool=c.call.name,
            status=status,
            content=content,
            started_at=c.started_at,
            ended_at=now() if c.started_at else None,
            decided_by=decided_by,
        )
        self.d.store.record_result(self.session, self.seq, c.idx, result)
        self.answered.add(c.idx)
        self.updates.send(
            ToolResultUpdate(
                session=self.session,
                call_id=c.call.id,
                tool=c.call.name,
                status=status,
                content=content[:UPDATE_PREVIEW_CHARS],
                started_at=iso(result.started_at),
                ended_at=iso(result.ended_at),
            )
        )


def _repeat_reason(turn: TurnState) -> str:
    return f"the same call was made {turn.repeat_limit} times in this turn (repeat guard)"
