"""A parked reply: what waits, deciding it by id, and giving up on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.doubles import ScriptedProvider, reply
from tests.unit.agent.harness import Harness
from tether.errors import NotFound, NothingWaiting, Refused
from tether.models import Reply, ToolCall
from tether.tools.base import ToolContext


async def parked(tmp_path: Path, *calls: ToolCall) -> Harness:
    script = ScriptedProvider(
        reply(("echo", {"value": "before"})).model_copy(update={"tool_calls": calls})
    )
    h = Harness(tmp_path, script)
    h.person.decisions = [None]
    result = await h.run()
    assert result.status == "awaiting_approval"
    return h


def write(call_id: str, path: str) -> ToolCall:
    return ToolCall(id=call_id, name="write", arguments=f'{{"path": "{path}", "content": "x"}}')


async def test_an_unknown_call_id_is_not_found_and_nothing_is_recorded(tmp_path: Path) -> None:
    h = await parked(tmp_path, write("w1", "a"), write("w2", "b"))
    session = h.store.sessions.listed()[0].id
    with pytest.raises(NotFound, match="no pending call nope"):
        await h.service.approve(session, ["nope"], None, h.recorder)
    last = h.store.transcript.last_reply(session)
    assert last is not None
    assert [c.decision for c in last.choices.values()] == ["dismissed"]  # the dialog's, only


async def test_a_repeated_call_id_never_lets_a_decision_reach_the_wrong_call(
    tmp_path: Path,
) -> None:
    h = await parked(tmp_path, write("same", "harmless.txt"), write("same", "other.txt"))
    session = h.store.sessions.listed()[0].id
    with pytest.raises(Refused, match="names 2 waiting calls"):
        await h.service.approve(session, ["same"], None, h.recorder)
    assert not (h.workspace / "harmless.txt").exists() and not (h.workspace / "other.txt").exists()


async def test_a_new_prompt_answers_the_parked_calls_as_never_run(tmp_path: Path) -> None:
    h = await parked(tmp_path, write("w1", "a"))
    session = h.store.sessions.listed()[0].id
    h.provider.replies.append(reply(text="fine"))

    result = await h.run("something else", session)

    assert result.status == "done"
    answers = h.answers(session)
    assert [s for _, s, _ in answers] == ["not_executed"]
    assert "the person sent a new message instead" in answers[0][2]


async def test_cancelling_a_parked_turn_answers_it_and_ends_cancelled(tmp_path: Path) -> None:
    h = await parked(tmp_path, write("w1", "a"))
    session = h.store.sessions.listed()[0].id
    assert h.service.cancel(session, h.recorder)
    assert h.statuses(session) == ["not_executed"]
    assert h.store.sessions.get(session).status == "cancelled"
    with pytest.raises(NothingWaiting):
        await h.service.approve(session, None, None, h.recorder)


async def test_a_prompt_to_a_session_nothing_waits_in_builds_no_parked_reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Most turns: the check for a parked reply builds neither the session's view of the
    tools nor a tool context (the turn builds its own once)."""
    h = Harness(tmp_path, ScriptedProvider(Reply(text="hi")))
    built: list[str] = []
    context = h.service.in_force.context

    def counted() -> ToolContext:
        built.append("context")
        return context()

    monkeypatch.setattr(h.service.in_force, "context", counted)
    assert (await h.run("hello")).status == "done"
    assert built == ["context"]
