"""The loop and the dispatcher with a scripted provider: no LSP, no network."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.scripted import EchoTool, ScriptedProvider, WriteTool, reply
from tether.agent.approval import Answer, Gate
from tether.agent.compaction import Compactor
from tether.agent.dispatch import Dispatcher
from tether.agent.events import Update
from tether.agent.loop import Agent
from tether.agent.turns import Turns
from tether.config import Settings
from tether.errors import ProviderError, SessionBusy
from tether.models import PendingCall, ToolMessage, TurnResult, UserMessage
from tether.store import Store
from tether.tools.base import NoDocuments, ToolContext


class Recorder:
    def __init__(self) -> None:
        self.updates: list[Update] = []

    def send(self, update: Update) -> None:
        self.updates.append(update)


class ScriptedPerson:
    """Answers approval questions from a script, and counts budget questions."""

    def __init__(self, *answers: Answer | None) -> None:
        self.decisions = list(answers)
        self.asked: list[PendingCall] = []

        self.extend: bool | None = False  # None: hang until cancelled
        self.budget_questions = 0

    def can_ask(self) -> bool:
        return True

    async def ask(self, session: str, call: PendingCall, preview: str) -> Answer | None:
        self.asked.append(call)
        return self.decisions.pop(0)

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        self.budget_questions += 1
        if self.extend is None:
            await asyncio.sleep(3600)
        return bool(self.extend)


class Harness:
    def __init__(self, tmp_path: Path, provider: ScriptedProvider, **turn: Any) -> None:
        self.settings = Settings.load({}, {"turn": turn, "state_dir": str(tmp_path / "state")})
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.store = Store(self.settings.state_dir / "s.sqlite3")
        self.echo = EchoTool()
        self.approvals = ScriptedPerson()
        ctx = ToolContext(self.workspace, NoDocuments(), self.settings.tools)
        tools = [self.echo, WriteTool()]
        gate = Gate(self.store, self.approvals, self.workspace)
        dispatcher = Dispatcher(tools, ctx, self.store, gate, self.settings)
        self.provider = provider
        compactor = Compactor(provider, self.store, self.settings.turn)
        self.agent = Agent(
            provider, self.store, dispatcher, compactor, "system", [], self.settings.turn
        )
        self.turns = Turns(self.store)
        self.recorder = Recorder()

    async def run(self, prompt: str = "go") -> TurnResult:
        session = self.store.create_session(self.workspace, prompt)
        return await self.turns.run(self.agent, session, prompt, self.recorder)

    def answers(self, session: str) -> list[tuple[str, str, str]]:
        return [
            (m.result.call_id, m.result.status, m.result.content)
            for m in self.store.load(session)
            if isinstance(m, ToolMessage)
        ]


async def test_loops_until_the_model_answers_in_words(tmp_path: Path) -> None:
    first = reply(("echo", {"value": "a"}))
    h = Harness(tmp_path, ScriptedProvider(first, reply(text="all done")))

    result = await h.run()

    assert result.status == "done" and result.answer == "all done"
    second = h.provider.requests[1].messages
    assert isinstance(second[-2], ToolMessage) and second[-2].result.content == "echo: a"


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
    stats = h.store.stats(result.session)
    assert stats.tool_time_s < stats.tool_time_sum_s


async def test_a_failing_call_stops_none_of_its_siblings(tmp_path: Path) -> None:
    calls = reply(("echo", {"value": "x", "fail": True}), ("echo", {"value": "y", "sleep_s": 0.05}))
    h = Harness(tmp_path, ScriptedProvider(calls, reply(text="ok")))
    result = await h.run()
    assert [s for _, s, _ in h.answers(result.session)] == ["error", "ok"]


async def test_duplicate_calls_run_in_order(tmp_path: Path) -> None:
    same = {"value": "dup", "sleep_s": 0.05}
    h = Harness(tmp_path, ScriptedProvider(reply(("echo", same), ("echo", same)), reply(text="ok")))
    await h.run()
    assert h.echo.peak == 1


async def test_the_repeat_guard_stops_the_turn_at_the_limit(tmp_path: Path) -> None:
    same = ("echo", {"value": "again"})
    script = [reply(same), reply(same), reply(same, ("echo", {"value": "other"}))]
    h = Harness(tmp_path, ScriptedProvider(*script), repeat_limit=3)

    result = await h.run()

    assert result.status == "stopped" and "repeat" in (result.error or "")
    statuses = [s for _, s, _ in h.answers(result.session)]
    assert statuses == ["ok", "ok", "not_executed", "not_executed"]


async def test_the_budget_answers_calls_past_it_not_executed(tmp_path: Path) -> None:
    calls = reply(*[("echo", {"value": str(i)}) for i in range(4)])
    h = Harness(tmp_path, ScriptedProvider(calls), tool_budget=2)

    result = await h.run()

    assert result.status == "stopped" and "budget" in (result.error or "")
    assert [s for _, s, _ in h.answers(result.session)] == [
        "ok",
        "ok",
        "not_executed",
        "not_executed",
    ]


async def test_two_calls_crossing_the_budget_ask_once_and_an_extension_runs_them(
    tmp_path: Path,
) -> None:
    calls = reply(*[("echo", {"value": str(i)}) for i in range(4)])
    h = Harness(tmp_path, ScriptedProvider(calls, reply(text="ok")), tool_budget=2)
    h.approvals.extend = True
    result = await h.run()
    assert h.approvals.budget_questions == 1
    assert result.status == "done"
    assert [s for _, s, _ in h.answers(result.session)] == ["ok"] * 4


async def test_a_cancel_during_the_budget_question_still_runs_the_calls_that_fit(
    tmp_path: Path,
) -> None:
    calls = reply(*[("echo", {"value": str(i)}) for i in range(3)])
    h = Harness(tmp_path, ScriptedProvider(calls), tool_budget=2)
    h.approvals.extend = None
    session = h.store.create_session(h.workspace, "t")
    task = asyncio.create_task(h.turns.run(h.agent, session, "go", h.recorder))
    while not h.approvals.budget_questions:
        await asyncio.sleep(0.01)
    h.turns.cancel(session, h.recorder)
    assert (await task).status == "cancelled"
    assert [s for _, s, _ in h.answers(session)] == ["ok", "ok", "not_executed"]


async def test_a_cancel_during_the_budget_question_runs_no_approval_requiring_call(
    tmp_path: Path,
) -> None:
    calls = reply(
        ("echo", {"value": "fits"}),
        ("write", {"path": "f.txt", "content": "x"}),
        ("echo", {"value": "over"}),
    )
    h = Harness(tmp_path, ScriptedProvider(calls), tool_budget=2)
    h.approvals.extend = None
    h.approvals.decisions = ["allow"]
    session = h.store.create_session(h.workspace, "t")
    task = asyncio.create_task(h.turns.run(h.agent, session, "go", h.recorder))
    while not h.approvals.budget_questions:
        await asyncio.sleep(0.01)
    h.turns.cancel(session, h.recorder)
    assert (await task).status == "cancelled"
    assert [s for _, s, _ in h.answers(session)] == ["ok", "not_executed", "not_executed"]
    assert h.approvals.asked == [] and not (h.workspace / "f.txt").exists()


async def test_a_bug_ends_the_turn_with_error_and_leaves_the_session_whole(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, ScriptedProvider(RuntimeError("a bug")))
    result = await h.run()
    assert result.status == "error" and "a bug" in (result.error or "")
    assert h.store.session(result.session).status == "error"


async def test_invalid_calls_are_answered_and_the_turn_goes_on(tmp_path: Path) -> None:
    bad = reply(
        ("nope", {}), ("echo", "{not json"), ("echo", {"value": 3}), ("echo", {"value": "ok"})
    )
    h = Harness(tmp_path, ScriptedProvider(bad, reply(text="fine")))
    result = await h.run()
    assert result.status == "done"
    assert [s for _, s, _ in h.answers(result.session)] == ["error", "error", "error", "ok"]


async def test_approval_requiring_calls_run_in_order_with_the_reads_after_them(
    tmp_path: Path,
) -> None:
    mixed = reply(
        ("write", {"path": "f.txt", "content": "one"}),
        ("echo", {"value": "after"}),
        ("write", {"path": "g.txt", "content": "two"}),
    )
    h = Harness(tmp_path, ScriptedProvider(mixed, reply(text="ok")))
    h.approvals.decisions = ["allow", "deny"]

    result = await h.run()

    assert (h.workspace / "f.txt").read_text() == "one" and not (h.workspace / "g.txt").exists()
    answers = h.answers(result.session)
    assert [s for _, s, _ in answers] == ["ok", "ok", "denied"]
    assert "denied" in answers[2][2]
    assert [c.summary for c in h.approvals.asked] == ["write f.txt", "write g.txt"]


async def test_a_parked_call_leaves_the_turn_awaiting_approval(tmp_path: Path) -> None:
    h = Harness(
        tmp_path, ScriptedProvider(reply(("echo", {}), ("write", {"path": "f", "content": ""})))
    )
    h.approvals.decisions = [None]
    result = await h.run()
    assert result.status == "awaiting_approval"
    assert result.pending is not None and result.pending[0].tool == "write"
    assert [s for _, s, _ in h.answers(result.session)] == ["ok"]


async def test_cancelling_answers_running_calls_interrupted_and_waiting_ones_not_executed(
    tmp_path: Path,
) -> None:
    calls = reply(*[("echo", {"value": str(i), "sleep_s": 5}) for i in range(10)])
    h = Harness(tmp_path, ScriptedProvider(calls))
    session = h.store.create_session(h.workspace, "t")
    task = asyncio.create_task(h.turns.run(h.agent, session, "go", h.recorder))
    while h.echo.running < 8:
        await asyncio.sleep(0.01)

    assert h.turns.cancel(session, h.recorder)
    result = await task

    assert result.status == "cancelled"
    statuses = [s for _, s, _ in h.answers(session)]
    assert statuses == ["interrupted"] * 8 + ["not_executed"] * 2
    assert h.store.session(session).status == "cancelled"


async def test_one_turn_per_session(tmp_path: Path) -> None:
    h = Harness(tmp_path, ScriptedProvider(reply(("echo", {"sleep_s": 0.2})), reply(text="ok")))
    session = h.store.create_session(h.workspace, "t")
    first = asyncio.create_task(h.turns.run(h.agent, session, "go", h.recorder))
    await asyncio.sleep(0.05)
    with pytest.raises(SessionBusy):
        await h.turns.run(h.agent, session, "again", h.recorder)
    assert (await first).status == "done"


async def test_a_provider_failure_ends_the_turn_with_error_and_nothing_half_written(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, ScriptedProvider(ProviderError("the provider said no")))
    result = await h.run()
    assert result.status == "error" and result.error == "the provider said no"
    assert h.store.load(result.session) == [UserMessage(content="go")]
