"""Catching up with tether's own changes: a search waits for the pass a short while at
most, and not at all where the last pass took longer."""

from __future__ import annotations

import asyncio

import pytest

from tether.index import catching_up
from tether.index.catching_up import CatchingUp


class Passes:
    """A catch-up pass that takes ``seconds`` (or fails), counted."""

    def __init__(self, seconds: float = 0.0, fails: bool = False) -> None:
        self.seconds, self.fails, self.runs = seconds, fails, 0

    async def __call__(self) -> float | None:
        self.runs += 1
        await asyncio.sleep(self.seconds)
        return None if self.fails else self.seconds


@pytest.fixture(autouse=True)
def short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catching_up, "CATCH_UP_S", 0.2)


async def test_with_nothing_marked_no_pass_runs() -> None:
    passes = Passes()
    assert await CatchingUp().caught_up(passes)
    assert passes.runs == 0


async def test_a_change_marked_is_caught_up_with_by_one_pass() -> None:
    state, passes = CatchingUp(), Passes()
    state.mark()
    state.mark()
    assert await state.caught_up(passes)
    assert passes.runs == 1 and state.caught == state.marked == 2
    assert await state.caught_up(passes)
    assert passes.runs == 1  # nothing new: no second pass


async def test_a_slow_pass_is_waited_for_a_while_then_goes_on_in_the_background() -> None:
    state, passes = CatchingUp(), Passes(seconds=0.6)
    state.mark()
    began = asyncio.get_running_loop().time()
    assert not await state.caught_up(passes)  # the search runs ripgrep meanwhile
    assert 0.15 < asyncio.get_running_loop().time() - began < 0.5
    await asyncio.sleep(0.6)
    assert state.caught == 1  # the pass went on and counted
    assert passes.runs == 1


async def test_after_a_slow_pass_a_search_does_not_wait_at_all() -> None:
    state, passes = CatchingUp(), Passes(seconds=0.3)
    state.mark()
    assert not await state.caught_up(passes)
    await state.close()  # the pass ends: it took longer than a search waits
    state.mark()
    began = asyncio.get_running_loop().time()
    assert not await state.caught_up(passes)
    assert asyncio.get_running_loop().time() - began < 0.1
    await state.close()
    assert state.caught == 2 and passes.runs == 2


async def test_a_pass_that_fails_catches_up_with_nothing() -> None:
    state, passes = CatchingUp(), Passes(fails=True)
    state.mark()
    assert not await state.caught_up(passes)
    assert state.caught == 0
    assert not await state.caught_up(passes)
    assert passes.runs == 2  # each search tries again


async def test_a_change_marked_during_a_pass_needs_the_next_one() -> None:
    state = CatchingUp()
    state.mark()
    runs = 0

    async def marking() -> float:
        nonlocal runs
        runs += 1
        if runs == 1:
            state.mark()  # tether changed a file while the first pass was under way
        await asyncio.sleep(0.01)
        return 0.01

    assert await state.caught_up(marking)
    assert runs == 2 and state.caught == state.marked == 2


def test_a_pass_that_saw_fewer_changes_never_lowers_what_was_caught_up() -> None:
    state = CatchingUp()
    state.up_to(3)
    state.up_to(1)
    assert state.caught == 3
