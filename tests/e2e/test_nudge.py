"""The "batch call" nudge: after a round with exactly one tool call, in that request only."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.conftest import StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls

NUDGE = {"role": "user", "content": "batch call"}


def nudges(request: dict[str, Any]) -> int:
    return sum(m == NUDGE for m in request["messages"])


async def test_a_single_call_round_ends_the_next_request_with_the_nudge(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(tool_calls(("fs-read", {"path": "a.txt"})), text("done"))

    await editor.run("read a.txt")

    second = stub.requests[1]["messages"]
    assert second[-1] == NUDGE
    assert second[-2]["role"] == "tool"  # after the tool results, not before them
    assert nudges(stub.requests[1]) == 1


async def test_rounds_with_no_call_or_several_calls_append_nothing(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(
        text("no tools"),
        tool_calls(("fs-read", {"path": "a.txt"}), ("fs-list", {})),
        text("done"),
    )

    first = await editor.run("hello")
    await editor.run("now read", session=first["session"])

    assert stub.requests[1]["messages"][-1] == {"role": "user", "content": "now read"}
    assert stub.requests[2]["messages"][-1]["role"] == "tool"
    assert [nudges(r) for r in stub.requests] == [0, 0, 0]


async def test_consecutive_single_call_rounds_each_append_one(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(
        tool_calls(("fs-read", {"path": "a.txt"})),
        tool_calls(("fs-list", {})),
        tool_calls(("git-head", {})),
        text("done"),
    )

    await editor.run("one at a time")

    assert [nudges(r) for r in stub.requests] == [0, 1, 1, 1]
    assert all(r["messages"][-1] == NUDGE for r in stub.requests[1:])


async def test_the_nudge_lives_only_in_its_request(
    start_editor: StartEditor, stub: ProviderStub, home: Path
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(tool_calls(("fs-read", {"path": "a.txt"})), text("done"), text("again"))
    result = await editor.run("read a.txt")
    assert nudges(stub.requests[1]) == 1

    history = await editor.history(result["session"])
    assert all(m.get("content") != "batch call" for m in history["messages"])
    files = [f for f in home.rglob("*") if f.is_file()]
    assert files and all(b"batch call" not in f.read_bytes() for f in files)

    # Reopened in a new server, the session's rebuilt request carries no nudge either.
    reopened = await start_editor()
    await reopened.run("go on", session=result["session"])
    rebuilt = stub.requests[2]["messages"]
    assert nudges(stub.requests[2]) == 0
    assert rebuilt[-1] == {"role": "user", "content": "go on"}
    assert [m["role"] for m in rebuilt] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]


async def test_compaction_summarises_older_rounds_and_the_nudge_survives_it_once(
    start_editor: StartEditor, stub: ProviderStub, home: Path
) -> None:
    small = {"tether": {"turn": {"context_tokens": 200, "keep_rounds": 2}}}
    editor = await start_editor(options=small)
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(
        tool_calls(("fs-read", {"path": "a.txt"})),
        tool_calls(("fs-list", {})),
        tool_calls(("git-head", {})),
        text("SUMMARY-1: read a.txt, it says alpha"),  # the summarisation request
        text("done"),
    )

    result = await editor.run("start")

    assert result["status"] == "done"
    summarising, after = stub.requests[3], stub.requests[4]
    assert "tools" not in summarising and nudges(summarising) == 0
    assert "[called fs-read" in summarising["messages"][-1]["content"]
    messages = after["messages"]
    assert messages[1]["role"] == "user" and "SUMMARY-1" in messages[1]["content"]
    kept_call = messages[2]
    assert (
        kept_call["role"] == "assistant"
        and kept_call["tool_calls"][0]["function"]["name"] == "fs-list"
    )
    assert messages[3]["tool_call_id"] == kept_call["tool_calls"][0]["id"]
    assert messages[-1] == NUDGE and nudges(after) == 1

    history = await editor.history(result["session"])
    assert [m["role"] for m in history["messages"]] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant",
    ]  # fmt: skip
    (compaction,) = history["compactions"]
    assert compaction["before"] == 3 and "SUMMARY-1" in compaction["summary"]
    files = [f for f in home.rglob("*") if f.is_file()]
    assert files and all(b"batch call" not in f.read_bytes() for f in files)
