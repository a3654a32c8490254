"""A turn's context between rounds: the cached load is always exactly the store's load."""

from __future__ import annotations

from pathlib import Path

from tether.agent.context_cache import ContextCache
from tether.models import Reply, ToolCall, ToolResult
from tether.store import Store


def answer(store: Store, session: str, seq: int, idx: int, text: str) -> None:
    result = ToolResult(call_id=f"c{seq}-{idx}", tool="fs-read", status="ok", content=text)
    store.transcript.record_result(session, seq, idx, result)


def reply(store: Store, session: str, calls: int) -> int:
    seq = store.transcript.next_seq(session)
    made = tuple(
        ToolCall(id=f"c{seq}-{i}", name="fs-read", arguments='{"path": "a"}') for i in range(calls)
    )
    return store.transcript.append_reply(session, Reply(text=f"r{seq}", tool_calls=made)).seq


def test_each_round_loads_what_the_store_holds(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    session = store.sessions.create(tmp_path, "t")
    cache = ContextCache(store.transcript)

    def same(since: int = 0, hidden: tuple[tuple[int, int], ...] = ()) -> None:
        expected = store.transcript.load(session, since=since, hidden=hidden)
        assert cache.load(session, since, hidden) == expected

    store.transcript.append_user(session, "first")
    same()
    first = reply(store, session, 2)
    same()  # both calls unanswered: nothing settled past them
    answer(store, session, first, 0, "one")
    same()
    answer(store, session, first, 1, "two")
    same()  # all answered: settled
    second = reply(store, session, 1)
    same()
    answer(store, session, second, 0, "three")
    store.transcript.append_reply(session, Reply(text="done"))
    same()
    store.transcript.append_user(session, "again")
    same(hidden=((first, second),))  # a rewind hid a span: loaded afresh
    same(since=second)  # a compaction moved the start
    same()
    store.close()
