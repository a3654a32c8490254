"""A reply resolved as a unit: order, concurrency, failure independence, the guard, the
budget, approvals, parking and cancellation, through the real service."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.support.doubles import ScriptedProvider, reply
from tests.unit.agent.harness import Harness
from tether.agent.events import OutputUpdate
from tether.errors import SessionBusy


async def test_concurrent_reads_are_recorded_in_call_order(tmp_path: Path) -> None:
    slow_first = reply(
        ("echo", {"value": "slow", "sleep_s": 0.3}),
        ("echo", {"value": "fast"}),
        ("echo", {"value": "mid", "sleep_s": 0.1}),
    )
    h = Harness(tmp_path, ScriptedProvider(slow_first, reply(text="ok")))

    result = await h.run()

    assert h.echo.peak == 3
    contents = [c for _, _, c in h.answers(result.session)]
    assert contents == ["echo: slow", "echo: fast", "echo: mid"]
    finished = [u.content for u in h.recorder.updates if u.kind == "tool_result"]
    assert finished == ["echo: fast", "echo: mid", "echo: slow"]
    stats = h.store.transcript.stats(result.session)
    assert stats.tool_time_s < stats.tool_time_sum_s


async def test_max_concurrency_bounds_a_batch(tmp_path: Path) -> None:
    many = reply(*[("echo", {"value": str(i), "sleep_s": 0.02}) for i in range(6)])
    h = Harness(tmp_path, ScriptedProvider(many, reply(text="ok")))
    assert h.config.set_layer("test", {"tools": {"max_concurrency": 2}}) is None
    await h.run()
    assert h.echo.peak == 2


async def test_a_failing_call_stops_none_of_its_siblings(tmp_path: Path) -> None:
    calls = reply(("echo", {"value": "x", "fail": True}), ("echo", {"value": "y", "sleep_s": 0.05}))
    h = Harness(tmp_path, ScriptedProvider(calls, reply(text="ok")))
    result = await h.run()
    assert h.statuses(result.session) == ["error", "ok"]


async def test_duplicate_calls_run_in_order(tmp_path: Path) -> None:
    same = {"value": "dup", "sleep_s": 0.05}
    h = Harness(tmp_path, ScriptedProvider(reply(("echo", same), ("echo", same)), reply(text="ok")))
    await h.run()
    assert h.echo.peak == 1


async def test_invalid_calls_are_answered_and_the_turn_goes_on(tmp_path: Path) -> None:
    bad = reply(
        ("nope", {}), ("echo", "{not json"), ("echo", {"value": 3}), ("echo", {"value": "ok"})
    )
    h = Harness(tmp_path, ScriptedProvider(bad, reply(text="fine")))
    result = await h.run()
    assert result.status == "done"
    assert h.statuses(result.session) == ["error", "error", "error", "ok"]


async def test_the_repeat_guard_stops_the_turn_at_the_limit(tmp_path: Path) -> None:
    same = ("echo", {"value": "again"})
    script = [reply(same), reply(same), reply(same, ("echo", {"value": "other"}))]
    h = Harness(tmp_path, ScriptedProvider(*script), repeat_limit=3)

    result = await h.run()

    assert result.status == "stopped" and "repeat" in (result.error or "")
    assert h.statuses(result.session) == ["ok", "ok", "not_executed", "not_executed"]


async def test_a_repeated_invalid_call_stops_the_turn_too(tmp_path: Path) -> None:
    bad = ("echo", {"value": 3})
    h = Harness(tmp_path, ScriptedProvider(reply(bad), reply(bad), reply(bad)), repeat_limit=3)
    result = await h.run()
    assert result.status == "stopped" and "repeat" in (result.error or "")
    assert len(h.provider.requests) == 3


async def test_the_budget_answers_calls_past_it_not_executed(tmp_path: Path) -> None:
    calls = reply(*[("echo", {"value": str(i)}) for i in range(4)])
    h = Harness(tmp_path, ScriptedProvider(calls), tool_budget=2)

    result = await h.run()

    assert result.status == "stopped" and "budget" in (result.error or "")
    assert h.statuses(result.session) == ["ok", "ok", "not_executed", "not_executed"]


async def test_two_calls_crossing_the_budget_ask_once_and_an_extension_runs_them(
    tmp_path: Path,
) -> None:
    calls = reply(*[("echo", {"value": str(i)}) for i in range(4)])
    h = Harness(tmp_path, ScriptedProvider(calls, reply(text="ok")), tool_budget=2)
    h.person.extend = True
    result = await h.run()
    assert h.person.budget_questions == 1
    assert result.status == "done"
    assert h.statuses(result.session) == ["ok"] * 4


async def test_a_cancel_during_the_budget_question_runs_nothing_more(tmp_path: Path) -> None:
    calls = reply(
        ("echo", {"value": "fits"}),
        ("write", {"path": "f.txt", "content": "x"}),
        ("echo", {"value": "over"}),
    )
    h = Harness(tmp_path, ScriptedProvider(calls), tool_budget=2)
    h.person.extend = None
    h.person.decisions = ["allow"]
    session, task = h.start()
    await h.person.budget_asked.wait()

    assert h.service.cancel(session, h.recorder)

    assert (await task).status == "cancelled"
    assert h.statuses(session) == ["not_executed"] * 3
    assert h.person.asked == [] and not (h.workspace / "f.txt").exists()


async def test_approval_requiring_calls_run_in_order_with_the_reads_after_them(
    tmp_path: Path,
) -> None:
    mixed = reply(
        ("write", {"path": "f.txt", "content": "one"}),
        ("echo", {"value": "after"}),
        ("write", {"path": "g.txt", "content": "two"}),
    )
    h = Harness(tmp_path, ScriptedProvider(mixed, reply(text="ok")))
    h.person.decisions = ["allow", "deny"]

    result = await h.run()

    assert (h.workspace / "f.txt").read_text() == "one" and not (h.workspace / "g.txt").exists()
    answers = h.answers(result.session)
    assert [s for _, s, _ in answers] == ["ok", "ok", "denied"]
    assert "denied" in answers[2][2]
    assert [c.summary for c in h.person.asked] == ["write f.txt", "write g.txt"]


async def test_a_parked_call_leaves_the_turn_awaiting_approval(tmp_path: Path) -> None:
    h = Harness(
        tmp_path,
        ScriptedProvider(reply(("echo", {}), ("write", {"path": "f", "content": ""}))),
    )
    h.person.decisions = [None]
    result = await h.run()
    assert result.status == "awaiting_approval"
    assert result.pending is not None and result.pending[0].tool == "write"
    assert h.statuses(result.session) == ["ok"]


async def test_a_resumed_reply_runs_the_reads_after_its_park_point(tmp_path: Path) -> None:
    parks = reply(
        ("write", {"path": "f.txt", "content": "one"}),
        ("echo", {"value": "after"}),
    )
    h = Harness(tmp_path, ScriptedProvider(parks, reply(text="ok")))
    h.person.decisions = [None]
    parked = await h.run()
    assert parked.status == "awaiting_approval" and h.statuses(parked.session) == []

    resumed = await h.service.approve(parked.session, None, None, h.recorder)

    assert resumed.status == "done"
    assert h.statuses(parked.session) == ["ok", "ok"]
    assert (h.workspace / "f.txt").read_text() == "one"


async def test_cancelling_answers_running_calls_interrupted_and_waiting_ones_not_executed(
    tmp_path: Path,
) -> None:
    calls = reply(*[("echo", {"value": str(i), "sleep_s": 5}) for i in range(10)])
    h = Harness(tmp_path, ScriptedProvider(calls))
    session, task = h.start()
    await h.echo.until_running(8)

    assert h.service.cancel(session, h.recorder)
    result = await task

    assert result.status == "cancelled"
    assert h.statuses(session) == ["interrupted"] * 8 + ["not_executed"] * 2
    assert h.store.sessions.get(session).status == "cancelled"
    # What an interrupted call had printed is kept in its answer, and was shown live.
    interrupted = [content for _, status, content in h.answers(session) if status == "interrupted"]
    assert all(
        "Its output until then" in c and f"echoing {i}" in c for i, c in enumerate(interrupted)
    )
    live = [u for u in h.recorder.updates if isinstance(u, OutputUpdate)]
    assert sorted(u.text for u in live) == sorted(f"echoing {i}\n" for i in range(8))


async def test_one_turn_per_session(tmp_path: Path) -> None:
    script = ScriptedProvider(reply(("echo", {"sleep_s": 5})), reply(text="ok"))
    h = Harness(tmp_path, script)
    session, first = h.start()
    await h.echo.until_running(1)
    with pytest.raises(SessionBusy):
        await h.run("again", session)
    h.service.cancel(session, h.recorder)
    assert (await first).status == "cancelled"


async def test_a_cancel_while_the_dialog_is_open_answers_the_call(tmp_path: Path) -> None:
    h = Harness(tmp_path, ScriptedProvider(reply(("write", {"path": "f", "content": ""}))))
    asked = asyncio.Event()

    async def hang(*_: object) -> None:
        asked.set()
        await asyncio.Event().wait()

    h.person.ask = hang  # type: ignore[method-assign, assignment]
    session, task = h.start()
    await asked.wait()
    h.service.cancel(session, h.recorder)
    assert (await task).status == "cancelled"
    assert h.statuses(session) == ["not_executed"]
