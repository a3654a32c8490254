"""Catching up with the changes tether made itself (``WorkspaceIndex.unsure``: after a
command, a patch), whatever the watcher's latency: the next search first waits for the
index's quick pass over what may have changed (git's list, or a walk comparing sizes and
mtimes), ``CATCH_UP_S`` at most; the pass goes on in the background, and a search that
stops waiting runs ripgrep. Where the last pass took longer than that (a big tree outside
git), a search does not wait at all.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

CATCH_UP_S = 0.5  # how long a search waits for the index to catch up before running rg

Pass = Callable[[], Awaitable[float | None]]  # one pass; how long it took, None if it failed


class CatchingUp:
    """How many of tether's own changes there were, and how many the index has seen."""

    def __init__(self) -> None:
        self.marked = 0  # tether's own changes so far
        self.caught = 0  # the changes the index has caught up with
        self._running: asyncio.Future[bool] | None = None
        self._took = 0.0  # how long the last pass took

    def mark(self) -> None:
        """A change tether made, or the disk to be asked (no watcher tells the changes)."""
        self.marked += 1

    def up_to(self, marked: int) -> None:
        """A pass that saw the first ``marked`` changes is over."""
        self.caught = max(self.caught, marked)

    async def caught_up(self, catch_up: Pass) -> bool:
        """Whether the index has caught up with every change marked, after waiting for
        ``catch_up``'s pass as long as it may."""
        wait = CATCH_UP_S if self._took <= CATCH_UP_S else 0
        deadline = asyncio.get_running_loop().time() + wait
        while self.caught < self.marked:
            if self._running is None or self._running.done():
                self._running = asyncio.ensure_future(self._pass(catch_up, self.marked))
            try:
                async with asyncio.timeout_at(deadline):
                    if not await asyncio.shield(self._running):
                        return False
            except TimeoutError:
                return False
        return True

    async def _pass(self, catch_up: Pass, marked: int) -> bool:
        took = await catch_up()
        if took is None:
            return False
        self._took = took
        self.up_to(marked)
        return True

    async def close(self) -> None:
        """Wait for the pass under way, if any."""
        if self._running is not None:
            await asyncio.gather(self._running, return_exceptions=True)
