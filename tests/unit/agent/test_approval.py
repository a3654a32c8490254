"""The gate: a recorded decision, then a remembered rule (one that denies before the policy
and any that allows), then the person; a dismissed question parks the call and is not asked
again; "Deny always" remembers a rule that denies."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.agent.harness import ScriptedPerson
from tether.agent.approval import Allow, Applied, Deny, Gate
from tether.errors import ToolError
from tether.models import PendingCall, RecordedChoice
from tether.store import Store
from tether.tools.base import Preview, RuleKey

CALL = PendingCall(call_id="c1", tool="command", arguments={}, summary="git status")
KEY = RuleKey(key="git status", words="run `git status …` commands")


@pytest.fixture
def gate(tmp_path: Path) -> Gate:
    return Gate(Store(tmp_path / "s.sqlite3"), ScriptedPerson(), tmp_path)


def person(gate: Gate) -> ScriptedPerson:
    assert isinstance(gate.person, ScriptedPerson)
    return gate.person


async def preview(budget: int) -> Preview:
    return Preview(text="$ git status")


async def no_preview(budget: int) -> Preview:
    raise ToolError("a recorded decision or a rule needs no preview")


def reply_at(gate: Gate) -> tuple[str, int, int]:
    store = gate.store
    session = store.sessions.create(Path("/ws"), "t")
    from tests.support.doubles import reply

    stored = store.transcript.append_reply(session, reply(("command", {"command": "git status"})))
    return (session, stored.seq, 0)


@pytest.mark.parametrize(
    ("recorded", "decision"),
    [
        (RecordedChoice(decision="allow"), Allow()),
        (RecordedChoice(decision="deny", reason="not now"), Deny(reason="not now")),
        (RecordedChoice(decision="deny"), Deny()),
        (RecordedChoice(decision="applied"), Applied()),
    ],
)
async def test_a_recorded_decision_is_taken_without_asking(
    gate: Gate, recorded: RecordedChoice, decision: object
) -> None:
    assert await gate.decide(reply_at(gate), CALL, no_preview, KEY, recorded) == decision
    assert person(gate).asked == []


async def test_a_rule_allows_without_asking_and_says_so(gate: Gate) -> None:
    at = reply_at(gate)
    gate.remember("workspace", at[0], "command", KEY)
    decision = await gate.decide(at, CALL, no_preview, KEY, None)
    assert isinstance(decision, Allow) and decision.by == f"rule: {KEY.words} (workspace)"


async def test_allow_always_remembers_a_workspace_rule(gate: Gate) -> None:
    at = reply_at(gate)
    person(gate).decisions = ["always"]
    assert await gate.decide(at, CALL, preview, KEY, None) == Allow()
    assert gate.store.rules.match("another session", gate.workspace, "command", KEY.key)


async def test_a_dismissed_question_parks_and_is_not_asked_again(gate: Gate) -> None:
    at = reply_at(gate)
    person(gate).decisions = [None]
    assert await gate.decide(at, CALL, preview, KEY, None) is None
    last = gate.store.transcript.last_reply(at[0])
    assert last is not None and last.choices == {0: RecordedChoice(decision="dismissed")}

    assert await gate.decide(at, CALL, no_preview, KEY, last.choices[0]) is None
    assert len(person(gate).asked) == 1


async def test_nobody_to_ask_parks_at_once(tmp_path: Path) -> None:
    person = ScriptedPerson()
    person.can_ask = lambda: False  # type: ignore[method-assign]
    gate = Gate(Store(tmp_path / "s.sqlite3"), person, tmp_path)
    assert await gate.decide(reply_at(gate), CALL, no_preview, KEY, None) is None
    assert person.asked == []


async def test_a_failing_budget_question_grants_nothing(gate: Gate) -> None:
    async def fails(session: str, budget: int, asked: int) -> bool:
        raise ToolError("the client went away")

    person(gate).extend_budget = fails  # type: ignore[method-assign]
    assert await gate.extend_budget("s", 10, 2) is False


async def test_the_question_says_what_allow_always_would_remember(gate: Gate) -> None:
    person(gate).decisions = ["allow"]
    await gate.decide(reply_at(gate), CALL, preview, KEY, None)
    (question,) = person(gate).questions
    assert question.preview == "$ git status" and question.always == KEY.words


async def test_allow_always_is_not_offered_for_a_call_not_shown_whole(gate: Gate) -> None:
    async def cut(budget: int) -> Preview:
        return Preview(text="$ echo …[cut]… rm -rf ~", whole=False)

    at = reply_at(gate)
    person(gate).decisions = ["always"]  # a client that sends it anyway
    assert await gate.decide(at, CALL, cut, KEY, None) == Allow()
    assert person(gate).questions[0].always is None
    assert gate.store.rules.match(at[0], gate.workspace, "command", KEY.key) is None


async def test_a_deny_rule_denies_without_asking_and_the_model_reads_which(gate: Gate) -> None:
    at = reply_at(gate)
    gate.remember("workspace", at[0], "command", KEY, "deny")
    decision = await gate.decide(at, CALL, no_preview, KEY, None)
    assert isinstance(decision, Deny) and decision.by == f"rule: {KEY.words} (workspace)"
    assert "remembered" in decision.reason and KEY.words in decision.reason
    assert "do not try it again" in decision.reason and person(gate).asked == []


async def test_a_deny_rule_outweighs_an_allow_rule_and_the_policy(gate: Gate) -> None:
    at = reply_at(gate)
    gate.remember("session", at[0], "command", KEY)
    gate.remember("workspace", at[0], "command", KEY, "deny")
    decision = await gate.decide(at, CALL, no_preview, KEY, None, unasked="sandboxed")
    assert isinstance(decision, Deny) and person(gate).asked == []


async def test_a_decision_recorded_on_the_call_outweighs_a_deny_rule(gate: Gate) -> None:
    at = reply_at(gate)
    gate.remember("workspace", at[0], "command", KEY, "deny")
    approved = RecordedChoice(decision="allow")
    assert await gate.decide(at, CALL, no_preview, KEY, approved) == Allow()


async def test_deny_always_denies_and_remembers_a_workspace_deny_rule(gate: Gate) -> None:
    at = reply_at(gate)
    person(gate).decisions = ["never"]
    decision = await gate.decide(at, CALL, preview, KEY, None)
    assert isinstance(decision, Deny) and KEY.words in decision.reason
    rule = gate.store.rules.match("another session", gate.workspace, "command", KEY.key)
    assert rule is not None and (rule.verdict, rule.scope) == ("deny", "workspace")
    again = await gate.decide(reply_at(gate), CALL, no_preview, KEY, None)
    assert isinstance(again, Deny) and len(person(gate).asked) == 1


async def test_deny_always_is_not_remembered_for_a_call_not_shown_whole(gate: Gate) -> None:
    async def cut(budget: int) -> Preview:
        return Preview(text="$ echo …[cut]… rm -rf ~", whole=False)

    at = reply_at(gate)
    person(gate).decisions = ["never"]  # a client that sends it anyway
    assert await gate.decide(at, CALL, cut, KEY, None) == Deny()
    assert gate.store.rules.match(at[0], gate.workspace, "command", KEY.key) is None
