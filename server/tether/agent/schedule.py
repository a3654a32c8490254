"""The scheduler: while the server runs, due tasks run through the same turn path as
``tether.run`` (same loop, same nudge); their approval-requiring calls park and are
announced instead of popping a dialog at an unexpected moment."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable

from tether.models import Task, now
from tether.store.tasks import Tasks

log = logging.getLogger(__name__)
IDLE_WAKE_S = 60.0
UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_every(every: str) -> float:
    """ "30m", "6h", "1d", "90s" as seconds; ValueError says how to write it."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", every)
    if not match or float(match[1]) <= 0:
        raise ValueError(
            f"invalid every {every!r}: give a number and a unit, as 30m, 6h, 1d or 90s"
        )
    return float(match[1]) * UNITS[match[2]]


class Scheduler:
    def __init__(self, tasks: Tasks, workspace: str) -> None:
        self.tasks = tasks
        self.workspace = workspace
        self.changed = asyncio.Event()
        self.running: set[asyncio.Task[None]] = set()

    def wake(self) -> None:
        """The schedule changed: look again now."""
        self.changed.set()

    async def serve(self, run: Callable[[Task], Awaitable[None]]) -> None:
        """Run each task as it falls due, with ``run``, until cancelled."""
        try:
            while True:
                for task in self.tasks.claim_due(self.workspace, now()):
                    job = asyncio.create_task(self._run(run, task))
                    self.running.add(job)
                    job.add_done_callback(self.running.discard)
                await self._sleep()
        finally:
            for job in list(self.running):
                job.cancel()
            await asyncio.gather(*self.running, return_exceptions=True)

    async def _sleep(self) -> None:
        following = self.tasks.next_due(self.workspace)
        delay = IDLE_WAKE_S if following is None else (following - now()).total_seconds()
        self.changed.clear()
        try:
            async with asyncio.timeout(min(max(delay, 0.05), IDLE_WAKE_S)):
                await self.changed.wait()
        except TimeoutError:
            pass

    async def _run(self, run: Callable[[Task], Awaitable[None]], task: Task) -> None:
        log.info("running scheduled task %s: %s", task.id, task.prompt[:60])
        await run(task)
