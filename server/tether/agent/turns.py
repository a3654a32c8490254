"""Turns: one at a time per session, side by side across sessions, each cancellable.

Each turn runs in its own task so that cancelling it (``tether.cancel``, the
progress's cancel, ``$/cancelRequest``) ends it with a normal ``cancelled``
result instead of tearing down the request that awaits it. A parked turn has no
task: its state is in the store, so any process can resume it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Coroutine
from typing import Any

from tether.agent.events import StatusUpdate, ToolResultUpdate, Updates
from tether.agent.loop import Agent
from tether.agent.owners import running_elsewhere
from tether.errors import ConfigError, ProviderError, RequestError, SessionBusy
from tether.models import ToolResult, TurnResult
from tether.store import Store

PARKED = "awaiting_approval"
log = logging.getLogger(__name__)


class Turns:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.running: dict[str, asyncio.Task[TurnResult]] = {}

    def is_running(self, session: str) -> bool:
        return session in self.running

    def open(self, session: str) -> str:
        """An existing session, made whole: calls a dead server left unanswered are answered."""
        info = self.store.session(session)  # raises UnknownSession
        if session in self.running or running_elsewhere(info):
            raise SessionBusy(session)
        parked = self.store.parked(session) if info.status == PARKED else None
        repaired = self.store.repair(session, keep=parked.seq if parked else None)
        if repaired or info.status == "running":
            self.store.set_status(session, "interrupted")
        return session

    async def run(self, agent: Agent, session: str, prompt: str, updates: Updates) -> TurnResult:
        if self.store.session(session).status == PARKED:
            self.settle(session, "the person sent a new message instead", updates)
        return await self._start(session, agent.run_turn(session, prompt, updates), updates)

    async def resume(self, agent: Agent, session: str, updates: Updates) -> TurnResult:
        parked = self.store.parked(session)
        if parked is None or self.store.session(session).status != PARKED:
            raise RequestError(f"session {session!r} has no calls waiting for approval")
        return await self._start(session, agent.resume_turn(session, parked, updates), updates)

    async def _start(
        self, session: str, body: Coroutine[Any, Any, TurnResult], updates: Updates
    ) -> TurnResult:
        if session in self.running:
            body.close()
            raise SessionBusy(session)
        task = asyncio.create_task(self._turn(session, body, updates))
        self.running[session] = task
        task.add_done_callback(lambda _: self.running.pop(session, None))
        return await task

    async def _turn(
        self, session: str, body: Coroutine[Any, Any, TurnResult], updates: Updates
    ) -> TurnResult:
        self.store.set_status(session, "running", owner=os.getpid())
        updates.send(StatusUpdate(session=session, status="running"))
        try:
            result = await body
        except asyncio.CancelledError:
            result = TurnResult(session=session, status="cancelled")
        except (ProviderError, ConfigError) as exc:
            result = TurnResult(session=session, status="error", error=str(exc))
        except Exception as exc:  # a bug must end this turn plainly, not strand the session
            log.exception("turn on session %s failed", session)
            self.store.repair(session)  # every call it left has an answer
            result = TurnResult(session=session, status="error", error=f"internal error: {exc!r}")
        self.store.set_status(session, result.status)
        updates.send(StatusUpdate(session=session, status=result.status, detail=result.error))
        return result

    def cancel(self, session: str, updates: Updates) -> bool:
        task = self.running.get(session)
        if task is not None and not task.done():
            task.cancel()
            return True
        if self.store.session(session).status != PARKED:
            return False
        self.settle(session, "the person cancelled the turn", updates)
        self.store.set_status(session, "cancelled")
        updates.send(StatusUpdate(session=session, status="cancelled"))
        return True

    def settle(self, session: str, why: str, updates: Updates) -> None:
        """Answer every call of a parked reply that has none: it never started."""
        parked = self.store.parked(session)
        for idx, call in enumerate(parked.calls if parked else ()):
            if parked is None or idx in parked.answered:
                continue
            content = f"not executed: {why}; it never ran."
            result = ToolResult(
                call_id=call.id, tool=call.name, status="not_executed", content=content
            )
            self.store.record_result(session, parked.seq, idx, result)
            updates.send(
                ToolResultUpdate(
                    session=session,
                    call_id=call.id,
                    tool=call.name,
                    status="not_executed",
                    content=content,
                )
            )

    async def shutdown(self) -> None:
        """Cancel every running turn and wait until each has answered its calls."""
        tasks = list(self.running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
