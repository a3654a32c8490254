"""Turns: one at a time per session, side by side across sessions, each cancellable.

Each turn runs in its own task so that cancelling it (``tether.cancel``, the
progress's cancel, ``$/cancelRequest``) ends it with a normal ``cancelled``
result instead of tearing down the request that awaits it.
"""

from __future__ import annotations

import asyncio
import os

from tether.agent.events import StatusUpdate, Updates
from tether.agent.loop import Agent
from tether.agent.owners import running_elsewhere
from tether.errors import ConfigError, ProviderError, SessionBusy
from tether.models import TurnResult
from tether.store import Store


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
        repaired = self.store.repair(session)
        if repaired or info.status == "running":
            self.store.set_status(session, "interrupted")
        return session

    async def run(self, agent: Agent, session: str, prompt: str, updates: Updates) -> TurnResult:
        if session in self.running:
            raise SessionBusy(session)
        task = asyncio.create_task(self._turn(agent, session, prompt, updates))
        self.running[session] = task
        task.add_done_callback(lambda _: self.running.pop(session, None))
        return await task

    async def _turn(self, agent: Agent, session: str, prompt: str, updates: Updates) -> TurnResult:
        self.store.set_status(session, "running", owner=os.getpid())
        updates.send(StatusUpdate(session=session, status="running"))
        try:
            result = await agent.run_turn(session, prompt, updates)
        except asyncio.CancelledError:
            result = TurnResult(session=session, status="cancelled")
        except (ProviderError, ConfigError) as exc:
            result = TurnResult(session=session, status="error", error=str(exc))
        self.store.set_status(session, result.status)
        updates.send(StatusUpdate(session=session, status=result.status, detail=result.error))
        return result

    def cancel(self, session: str) -> bool:
        task = self.running.get(session)
        if task is None or task.done():
            return False
        task.cancel()
        return True

    async def shutdown(self) -> None:
        """Cancel every running turn and wait until each has answered its calls."""
        tasks = list(self.running.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
