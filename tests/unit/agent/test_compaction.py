"""Compaction: what is sent changes, what is kept does not."""

from __future__ import annotations

from pathlib import Path

from tests.support.doubles import ScriptedProvider, reply
from tether.agent.compaction import SUMMARY_HEAD, Compactor
from tether.config import Settings
from tether.models import (
    AssistantMessage,
    Message,
    Reply,
    ToolMessage,
    ToolResult,
    Usage,
    UserMessage,
)
from tether.store import Store


def session_with_rounds(store: Store, rounds: int) -> str:
    session = store.sessions.create(Path("/ws"), "t")
    store.transcript.append_user(session, "start")
    for n in range(rounds):
        made = reply(("echo", {"value": str(n)}), text=f"round {n}")
        seq = store.transcript.append_reply(session, made).seq
        call = made.tool_calls[0]
        store.transcript.record_result(
            session,
            seq,
            0,
            ToolResult(call_id=call.id, tool="echo", status="ok", content="x" * 500),
        )
    return session


def compactor(tmp_path: Path, provider: ScriptedProvider, **turn: int) -> tuple[Compactor, Store]:
    settings = Settings.load({}, {"turn": {"context_tokens": 200, "keep_rounds": 2, **turn}})
    store = Store(tmp_path / "s.sqlite3")
    return Compactor(provider, store, settings.turn), store


async def test_older_rounds_become_one_summary_and_recent_ones_stay_whole(tmp_path: Path) -> None:
    provider = ScriptedProvider(Reply(text="the summary"))
    compacting, store = compactor(tmp_path, provider)
    session = session_with_rounds(store, 4)
    kept_before = store.transcript.load(session)

    assert await compacting.maybe_compact(session)

    context = compacting.context(session)
    assert isinstance(context[0], UserMessage) and context[0].content.startswith(SUMMARY_HEAD)
    assert "the summary" in context[0].content
    assert isinstance(context[1], AssistantMessage) and context[1].content == "round 2"
    assert isinstance(context[2], ToolMessage)
    assert context[2].result.call_id == context[1].tool_calls[0].id
    assert len(context) == 1 + 4  # two rounds kept, each a reply and its result
    assert store.transcript.load(session) == kept_before  # nothing is lost from the store
    sent = provider.requests[0]
    assert isinstance(sent.messages[0], UserMessage)
    assert sent.tools == () and "[called echo" in sent.messages[0].content


async def test_a_small_context_is_left_alone(tmp_path: Path) -> None:
    compacting, store = compactor(tmp_path, ScriptedProvider(), context_tokens=100_000)
    session = session_with_rounds(store, 4)
    assert not await compacting.maybe_compact(session)
    assert compacting.context(session) == store.transcript.load(session)


async def test_too_few_rounds_to_cut_is_left_alone(tmp_path: Path) -> None:
    compacting, store = compactor(tmp_path, ScriptedProvider())
    session = session_with_rounds(store, 2)
    assert not await compacting.maybe_compact(session)


async def test_reported_usage_counts_only_when_newer_than_the_last_compaction(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(Reply(text="s1"))
    compacting, store = compactor(tmp_path, provider, context_tokens=10_000)
    session = session_with_rounds(store, 4)
    store.transcript.append_reply(
        session, Reply(text="big", usage=Usage(input_tokens=9000, output_tokens=10))
    )
    assert compacting.estimate(session, compacting.context(session)) == 9010

    assert await compacting.maybe_compact(session)
    # The usage predates the compaction: the estimate falls back to the text's length.
    assert compacting.estimate(session, compacting.context(session)) < 1000


async def test_a_rounds_context_is_built_once_and_again_only_after_a_compaction(
    tmp_path: Path,
) -> None:
    compacting, store = compactor(tmp_path, ScriptedProvider(Reply(text="the summary")))
    built: list[str] = []
    build = compacting.context

    def counted(session: str) -> list[Message]:
        built.append(session)
        return build(session)

    compacting.context = counted  # type: ignore[method-assign]
    small = session_with_rounds(store, 2)  # too few rounds to cut
    assert await compacting.prepared(small) == store.transcript.load(small)
    assert built == [small]

    built.clear()
    big = session_with_rounds(store, 4)
    context = await compacting.prepared(big)
    assert built == [big, big]  # weighed, compacted, then built again
    assert isinstance(context[0], UserMessage) and "the summary" in context[0].content
    assert context == build(big)
