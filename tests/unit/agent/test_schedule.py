"""The scheduler: intervals as people write them, and due tasks run once each."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tether.agent.schedule import Scheduler, parse_every
from tether.models import Task
from tether.store import Store


@pytest.mark.parametrize(
    ("every", "seconds"),
    [("30m", 1800), ("6h", 21600), ("1d", 86400), ("90s", 90), (" 2 h ", 7200)],
)
def test_intervals(every: str, seconds: float) -> None:
    assert parse_every(every) == seconds


@pytest.mark.parametrize("every", ["soon", "5", "m", "-5m", "0s", "5w"])
def test_bad_intervals_say_what_to_give(every: str) -> None:
    with pytest.raises(ValueError, match="30m, 6h"):
        parse_every(every)


async def test_due_tasks_run_and_a_new_one_wakes_the_scheduler(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    scheduler = Scheduler(store.tasks, "/ws")
    ran: list[str] = []
    both_ran = asyncio.Event()

    async def run(task: Task) -> None:
        ran.append(task.prompt)
        if len(ran) == 2:
            both_ran.set()

    store.tasks.add("/ws", "first", "1h", 0.05, None)  # due in 50 ms
    serving = asyncio.create_task(scheduler.serve(run))
    store.tasks.add("/ws", "second", "1h", 0.05, None)
    scheduler.wake()  # else the scheduler would sleep until its next look
    async with asyncio.timeout(5):
        await both_ran.wait()
    serving.cancel()
    await asyncio.gather(serving, return_exceptions=True)
    assert sorted(ran) == ["first", "second"]
