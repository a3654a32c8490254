"""The session store: order of writes, repair, stats."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from tether.errors import UnknownSession
from tether.models import (
    AssistantMessage,
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
    session = store.create_session(Path("/ws"), "  a   title\nwith lines ")
    store.append_user(session, "hi")
    seq = store.append_reply(session, three_calls())
    t0 = now()
    for idx in (2, 0, 1):  # completion order differs from call order
        store.mark_started(session, seq, idx, t0)
        store.record_result(
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

    messages = store.load(session)

    assert isinstance(messages[0], UserMessage) and isinstance(messages[1], AssistantMessage)
    assert [m.result.call_id for m in messages[2:] if isinstance(m, ToolMessage)] == [
        "c0",
        "c1",
        "c2",
    ]
    assert store.session(session).title == "a title with lines"


def test_a_call_is_answered_once(store: Store) -> None:
    session = store.create_session(Path("/ws"), "t")
    seq = store.append_reply(session, three_calls())
    first = ToolResult(call_id="c0", tool="fs-read", status="ok", content="first")
    store.record_result(session, seq, 0, first)
    store.record_result(session, seq, 0, first.model_copy(update={"content": "second"}))
    answers = [m for m in store.load(session) if isinstance(m, ToolMessage)]
    assert [a.result.content for a in answers] == ["first"]


def test_repair_answers_unanswered_calls_by_whether_they_started(store: Store) -> None:
    session = store.create_session(Path("/ws"), "t")
    seq = store.append_reply(session, three_calls())
    store.record_result(
        session, seq, 0, ToolResult(call_id="c0", tool="fs-read", status="ok", content="x")
    )
    store.mark_started(session, seq, 1, now())  # started, never finished: a crash

    assert store.repair(session) == 2
    assert store.repair(session) == 0

    answers = [m.result for m in store.load(session) if isinstance(m, ToolMessage)]
    assert [a.status for a in answers] == ["ok", "interrupted", "cancelled"]
    assert [a.reason for a in answers[1:]] == [REPAIR_REASON] * 2
    assert [a.decided_by for a in answers[1:]] == ["repair"] * 2
    assert "may have had effects" in answers[1].content and "never started" in answers[2].content


def test_stats_give_the_union_of_spans_and_their_sum(store: Store) -> None:
    session = store.create_session(Path("/ws"), "t")
    seq = store.append_reply(session, three_calls())
    t0 = now()
    spans = [(0.0, 2.0), (1.0, 3.0), (5.0, 6.0)]  # two overlap, one stands apart
    for idx, (start, end) in enumerate(spans):
        store.record_result(
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
    stats = store.stats(session)
    assert stats.tool_calls == 3
    assert stats.tool_time_s == pytest.approx(4.0)
    assert stats.tool_time_sum_s == pytest.approx(5.0)


def test_sessions_are_listed_per_workspace_newest_first(store: Store) -> None:
    a = store.create_session(Path("/one"), "a")
    b = store.create_session(Path("/one"), "b")
    store.create_session(Path("/two"), "c")
    store.append_user(a, "touch a last")
    assert [s.id for s in store.sessions(Path("/one"))] == [a, b]
    with pytest.raises(UnknownSession):
        store.load("nope")


def test_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite3"
    first = Store(path)
    session = first.create_session(Path("/ws"), "t")
    first.append_user(session, "kept")
    first.close()
    assert Store(path).load(session) == [UserMessage(content="kept")]
