"""Turns: one at a time per session, side by side across sessions, each cancellable.

A turn starts only by claiming its session in the store (one conditional update), so
two tether processes sharing a store never run one session twice. Each turn runs in
its own task, so that cancelling it (``tether.cancel``, the progress's cancel,
``$/cancelRequest``) ends it with a normal ``cancelled`` result instead of tearing
down the request that awaits it. A parked turn has no task: its state is in the
store, so any process can resume it.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable

from tether.agent.events import StatusUpdate, Updates, ended
from tether.agent.liveness import running_elsewhere
from tether.errors import ConfigError, ProviderError, SessionBusy
from tether.models import PARKED, SessionInfo, TurnResult
from tether.outbound import outbound
from tether.store import Store

log = logging.getLogger(__name__)


class Turns:
    def __init__(self, store: Store) -> None:
        self.store = store
        self.running: dict[str, asyncio.Task[TurnResult]] = {}

    def is_running(self, session: str) -> bool:
        return session in self.running

    def open(self, session: str) -> SessionInfo:
        """An existing session, made whole: calls a dead server left unanswered are answered
        (a parked reply's calls wait, they are not lost).

        The repair writes only while the session is still as it was seen: another process
        that claimed it meanwhile is running its turn, and that turn's calls are not
        orphans."""
        info = self.store.sessions.get(session)
        if session in self.running or running_elsewhere(info):
            raise SessionBusy(session)
        keep = None
        if info.status == PARKED and (reply := self.store.transcript.last_reply(session)):
            keep = reply.seq
        repaired = self.store.transcript.repair(session, keep=keep, seen=info)
        if repaired is None:
            raise SessionBusy(session)
        if repaired or info.status == "running":
            seen, info = info, info.model_copy(update={"status": "interrupted", "owner": None})
            if not self.store.sessions.claim(seen, "interrupted"):
                # Another process got there first: busy if it runs a turn now, else it
                # made the session whole just as this one would have.
                info = self.store.sessions.get(session)
                if info.status == "running":
                    raise SessionBusy(session)
        return info

    async def start(
        self, seen: SessionInfo, body: Callable[[], Awaitable[TurnResult]], updates: Updates
    ) -> TurnResult:
        """Run ``body`` as the session's turn, if the session is still as ``seen``.

        A session seen ``running`` is never claimed from that state: its owner runs a turn
        (a dead owner's session is made whole by ``open`` first). The claim would hold
        against such a row, so two processes would run one session at once."""
        session = seen.id
        if (
            session in self.running
            or seen.status == "running"
            or not self.store.sessions.claim(seen, "running", owner=os.getpid())
        ):
            raise SessionBusy(session)
        task = asyncio.create_task(self._turn(session, body, updates))
        self.running[session] = task
        task.add_done_callback(lambda _: self._ended(session, task, updates))
        try:
            return await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
            return TurnResult(session=session, status="cancelled")

    def _ended(self, session: str, task: asyncio.Task[TurnResult], updates: Updates) -> None:
        """The turn's task is done. One cancelled before its first step never ran
        ``_turn`` (the cancel came between the claim and the loop's next pass): it ran
        nothing, and it gives the session up here, or the session stays ``running``."""
        self.running.pop(session, None)
        if task.cancelled():
            self.store.sessions.set_status(session, "cancelled")
            updates.send(ended(TurnResult(session=session, status="cancelled")))

    async def _turn(
        self, session: str, body: Callable[[], Awaitable[TurnResult]], updates: Updates
    ) -> TurnResult:
        updates.send(StatusUpdate(session=session, status="running"))
        try:
            result = await body()
        except asyncio.CancelledError:
            result = TurnResult(session=session, status="cancelled")
        except (ProviderError, ConfigError) as exc:
            result = TurnResult(session=session, status="error", error=str(exc))
        except Exception as exc:  # a bug must end this turn plainly, not strand the session
            log.exception("turn on session %s failed", session)
            self.store.transcript.repair(session)  # every call it left has an answer
            error = (
                f"tether failed inside ({type(exc).__name__}: {exc}); the session is kept and "
                "every call has its answer, so it takes the next prompt. The server's log "
                "has the details."
            )
            result = TurnResult(session=session, status="error", error=outbound(error)[:2000])
        self.store.sessions.set_status(session, result.status)
        updates.send(ended(result))
        return result

    def cancel(self, session: str) -> bool:
        """Cancel the session's running turn, if this process runs it."""
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
