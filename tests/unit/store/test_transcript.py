"""A session's transcript in the store: order of writes, one answer per call, repair, stats."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tether.models import (
    AssistantMessage,
    RecordedChoice,
    Reply,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
    now,
)
from tether.store import REPAIR_REASON, Store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "state" / "sessions.sqlite3")


def three_calls() -> Reply:
    calls = tuple(
        ToolCall(id=f"c{i}", name="fs-read", arguments=f'{{"path": "{i}"}}') for i in range(3)
    )
    return Reply(text="reading", tool_calls=calls)


def test_transcript_reads_back_in_call_order_whatever_the_completion_order(store: Store) -> None:
    session = store.sessions.create(Path("/ws"), "  a   title\nwith lines ")
    store.transcript.append_user(session, "hi")
    seq = store.transcript.append_reply(session, three_calls()).seq
    t0 = now()
    for idx in (2, 0, 1):  # completion order differs from call order
        store.transcript.mark_started(session, seq, idx, t0)
        store.transcript.record_result(
            session,
            seq,
            idx,
            ToolResult(
                call_id=f"c{idx}",
                tool="fs-read",
                status="ok",
                content=str(idx),
                started_at=t0,
                ended_at=t0 + timedelta(seconds=1),
            ),
        )

    messages = store.transcript.load(session)

    assert isinstance(messages[0], UserMessage) and isinstance(messages[1], AssistantMessage)
    assert [m.result.call_id for m in messages[2:] if isinstance(m, ToolMessage)] == [
        "c0",
        "c1",
        "c2",
    ]
    assert store.sessions.get(session).title == "a title with lines"


def test_a_call_is_answered_once(store: Store) -> None:
    session = store.sessions.create(Path("/ws"), "t")
    seq = store.transcript.append_reply(session, three_calls()).seq
    first = ToolResult(call_id="c0", tool="fs-read", status="ok", content="first")
    store.transcript.record_result(session, seq, 0, first)
    store.transcript.record_result(session, seq, 0, first.model_copy(update={"content": "second"}))
    answers = [m for m in store.transcript.load(session) if isinstance(m, ToolMessage)]
    assert [a.result.content for a in answers] == ["first"]


def test_repair_answers_unanswered_calls_by_whether_they_started(store: Store) -> None:
    session = store.sessions.create(Path("/ws"), "t")
    seq = store.transcript.append_reply(session, three_calls()).seq
    store.transcript.record_result(
        session, seq, 0, ToolResult(call_id="c0", tool="fs-read", status="ok", content="x")
    )
    store.transcript.mark_started(session, seq, 1, now())  # started, never finished: a crash

    assert store.transcript.repair(session) == 2
    assert store.transcript.repair(session) == 0

    answers = [m.result for m in store.transcript.load(session) if isinstance(m, ToolMessage)]
    assert [a.status for a in answers] == ["ok", "interrupted", "cancelled"]
    assert [a.reason for a in answers[1:]] == [REPAIR_REASON] * 2
    assert [a.decided_by for a in answers[1:]] == ["repair"] * 2
    assert "may have had effects" in answers[1].content and "never started" in answers[2].content


def test_stats_give_the_union_of_spans_and_their_sum(store: Store) -> None:
    session = store.sessions.create(Path("/ws"), "t")
    seq = store.transcript.append_reply(session, three_calls()).seq
    t0 = now()
    spans = [(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]  # two overlap, one stands apart
    for idx, (start, end) in enumerate(spans):
        store.transcript.record_result(
            session,
            seq,
            idx,
            ToolResult(
                call_id=f"c{idx}",
                tool="fs-read",
                status="ok",
                content="",
                started_at=t0 + timedelta(seconds=start),
                ended_at=t0 + timedelta(seconds=end),
            ),
        )
    stats = store.transcript.stats(session)
    assert stats.tool_calls == 3
    assert stats.tool_time_s == pytest.approx(4.0)
    assert stats.tool_time_sum_s == pytest.approx(5.0)


def test_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    first = Store(path)
    session = first.sessions.create(Path("/ws"), "t")
    first.transcript.append_user(session, "kept")
    first.close()
    assert Store(path).transcript.load(session) == [UserMessage(content="kept")]


def test_the_repaired_view_writes_nothing_and_keeps_the_parked_reply(store: Store) -> None:
    session = store.sessions.create(Path("/ws"), "t")
    crashed = store.transcript.append_reply(session, three_calls())
    store.transcript.mark_started(session, crashed.seq, 0, now())
    parked = store.transcript.append_reply(session, three_calls())

    view = store.transcript.load(session, as_repaired=True, keep=parked.seq)

    shown = [m.result.status for m in view if isinstance(m, ToolMessage)]
    assert shown == ["interrupted", "cancelled", "cancelled"]  # the parked reply's calls wait
    assert not [m for m in store.transcript.load(session) if isinstance(m, ToolMessage)]


def test_the_last_reply_carries_its_answers_and_recorded_choices(store: Store) -> None:
    session = store.sessions.create(Path("/ws"), "t")
    reply = store.transcript.append_reply(session, three_calls())
    ok = ToolResult(call_id="c0", tool="fs-read", status="ok", content="x")
    store.transcript.record_result(session, reply.seq, 0, ok)
    store.transcript.record_choice(
        session, reply.seq, 2, RecordedChoice(decision="deny", reason="no")
    )

    last = store.transcript.last_reply(session)

    assert last is not None and last.seq == reply.seq and not last.complete
    assert last.answered == {0}
    assert last.choices == {2: RecordedChoice(decision="deny", reason="no")}
