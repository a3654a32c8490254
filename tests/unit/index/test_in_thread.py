"""A step on the index's connection in a thread is carried to its end, even when the
task awaiting it is cancelled: its cancel is raised after."""

from __future__ import annotations

import asyncio
import threading

import pytest

from tether.index.in_thread import in_thread


async def test_its_result_and_its_error_are_the_callers() -> None:
    assert await in_thread(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        await in_thread(lambda: 1 / 0)


@pytest.mark.parametrize("cancels", [1, 3])
async def test_a_cancel_waits_for_the_thread_then_is_raised(cancels: int) -> None:
    inside, go = threading.Event(), threading.Event()
    ended: list[str] = []

    def step() -> str:
        inside.set()
        go.wait(10)
        ended.append("the thread")
        return "done"

    task = asyncio.ensure_future(in_thread(step))
    while not inside.is_set():
        await asyncio.sleep(0.005)
    for _ in range(cancels):
        task.cancel()
        await asyncio.sleep(0.02)
    assert not task.done()  # the thread runs on: so does the step
    go.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ended == ["the thread"]
