"""ACP turns end to end: reads through the client, permissions, patches, commands, cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import resource_block, resource_link_block, text_block
from acp.schema import TextResourceContents

from tests.e2e.acp.conftest import StartAcp
from tests.support.provider_stub import ProviderStub, hang, text, tool_calls
from tether.acp.prompt import Block


def tool_answers(stub: ProviderStub, request: int = 1) -> list[str]:
    return [m["content"] for m in stub.requests[request]["messages"] if m["role"] == "tool"]


async def test_reads_ask_the_client_for_its_unsaved_text_together(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    (workspace / "a.py").write_text("on disk a\n")
    (workspace / "b.py").write_text("on disk b\n")
    acp.editor.buffers[str(workspace / "a.py")] = "unsaved a\n"
    acp.editor.read_delay = 0.5
    stub.script(
        tool_calls(("fs-read", {"path": "a.py"}), ("fs-read", {"path": "b.py"})), text("read")
    )
    session = await acp.new()

    assert await acp.prompt(session, "read both") == "end_turn"

    a, b = tool_answers(stub)
    assert "unsaved a" in a and "on disk b" in b
    assert sorted(acp.editor.reads) == [str(workspace / "a.py"), str(workspace / "b.py")]
    assert acp.editor.most_reading == 2  # asked together, not one after the other
    (start, *_) = acp.editor.of("tool_call", session)
    assert start.kind == "read" and start.status == "pending"
    assert start.locations[0].path == str(workspace / "a.py")
    ends = [u for u in acp.editor.of("tool_call_update", session) if u.status == "completed"]
    assert len(ends) == 2


async def test_reads_go_to_disk_when_the_client_reads_no_files(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp(reads=False, writes=False)
    (workspace / "a.py").write_text("on disk a\n")
    acp.editor.buffers[str(workspace / "a.py")] = "unsaved a\n"
    stub.script(tool_calls(("fs-read", {"path": "a.py"})), text("read"))

    await acp.prompt(await acp.new(), "read")

    assert "on disk a" in tool_answers(stub)[0] and acp.editor.reads == []


async def test_resource_links_and_embedded_resources_become_the_prompt(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    stub.script(text("seen"))
    session = await acp.new()
    embedded = TextResourceContents(uri=(workspace / "notes.md").as_uri(), text="the notes")
    blocks: list[Block] = [
        text_block("look at"),
        resource_link_block(name="main.py", uri=(workspace / "src" / "main.py").as_uri()),
        resource_block(embedded),
    ]

    await acp.conn.prompt(session_id=session, prompt=blocks)

    sent = stub.requests[0]["messages"][-1]["content"]
    assert sent == 'look at\n@src/main.py\n<context from="notes.md">\nthe notes\n</context>'


async def test_allow_once_runs_the_command_and_streams_its_output(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    stub.script(tool_calls(("command", {"command": "echo streamed-out; echo x > made.txt"})))
    stub.script(text("done"))
    acp.editor.answers = ["allow"]
    session = await acp.new()

    assert await acp.prompt(session, "run it") == "end_turn"

    ((asked, options),) = acp.editor.asked
    assert [o.kind for o in options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert asked.title is not None and "echo streamed-out" in asked.title
    assert (workspace / "made.txt").read_text() == "x\n"
    (start,) = acp.editor.of("tool_call", session)
    assert start.kind == "execute"
    updates = acp.editor.call(start.tool_call_id)
    statuses = [u.status for u in updates]
    assert statuses[0] == "pending" and "in_progress" in statuses and statuses[-1] == "completed"
    assert any(
        u.status == "in_progress" and u.content and "streamed-out" in u.content[0].content.text
        for u in updates
    )


async def test_allow_always_remembers_and_the_next_call_is_not_asked(
    start_acp: StartAcp, stub: ProviderStub
) -> None:
    acp = await start_acp()
    stub.script(tool_calls(("command", {"command": "echo again"})), text("one"))
    stub.script(tool_calls(("command", {"command": "echo again"})), text("two"))
    acp.editor.answers = ["always"]
    session = await acp.new()

    await acp.prompt(session, "first")
    await acp.prompt(session, "second")

    assert len(acp.editor.asked) == 1
    assert all("exit code: 0" in answer for answer in tool_answers(stub, 1) + tool_answers(stub, 3))


async def test_reject_once_denies_the_call_and_the_model_reads_why(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    stub.script(tool_calls(("command", {"command": "touch nope.txt"})), text("ok"))
    acp.editor.answers = ["deny"]
    session = await acp.new()

    assert await acp.prompt(session, "try") == "end_turn"

    assert not (workspace / "nope.txt").exists()
    assert "denied" in tool_answers(stub)[0]
    (start,) = acp.editor.of("tool_call", session)
    assert acp.editor.call(start.tool_call_id)[-1].status == "failed"


async def test_a_dismissed_question_parks_the_call(start_acp: StartAcp, stub: ProviderStub) -> None:
    acp = await start_acp()
    stub.script(tool_calls(("command", {"command": "echo later"})))
    acp.editor.answers = [None]  # the outcome `cancelled`, with no session/cancel
    session = await acp.new()

    assert await acp.prompt(session, "wait for me") == "end_turn"

    assert "waiting for a decision on command: echo later" in acp.editor.said(session)
    (listed,) = (await acp.conn.list_sessions(cwd=str(acp.editor.workspace))).sessions
    assert listed.session_id == session


async def test_a_patch_is_asked_with_its_diff_and_written_through_the_client(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    acp.editor.buffers[str(path)] = "x = 1\ny = 2\n"  # unsaved in the editor
    edit = {"path": "a.py", "edits": [{"old": "y = 2", "new": "y = 3"}]}
    stub.script(tool_calls(("patch", edit)), text("patched"))
    acp.editor.answers = ["allow"]
    session = await acp.new()

    assert await acp.prompt(session, "patch it") == "end_turn"

    ((asked, _),) = acp.editor.asked
    assert asked.content is not None
    (diff,) = asked.content
    assert diff.type == "diff" and diff.path == str(path)
    assert (diff.old_text, diff.new_text) == ("x = 1\ny = 2\n", "x = 1\ny = 3\n")
    assert acp.editor.writes == [(str(path), "x = 1\ny = 3\n")]
    assert path.read_text() == "x = 1\n"  # the editor's buffer took it; it saves when it will
    (start,) = acp.editor.of("tool_call", session)
    assert start.kind == "edit"
    end = acp.editor.call(start.tool_call_id)[-1]
    assert end.status == "completed" and any(c.type == "diff" for c in end.content)


async def test_a_patch_goes_to_disk_when_the_client_writes_no_files(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp(reads=False, writes=False)
    (workspace / "a.py").write_text("x = 1\n")
    stub.script(tool_calls(("patch", {"path": "a.py", "content": "x = 2\n"})), text("ok"))
    acp.editor.answers = ["allow"]
    session = await acp.new()

    await acp.prompt(session, "rewrite")

    assert (workspace / "a.py").read_text() == "x = 2\n" and acp.editor.writes == []
    (start,) = acp.editor.of("tool_call", session)
    (diff,) = [c for c in acp.editor.call(start.tool_call_id)[-1].content if c.type == "diff"]
    assert (diff.old_text, diff.new_text) == ("x = 1\n", "x = 2\n")


async def test_session_cancel_ends_a_running_turn(start_acp: StartAcp, stub: ProviderStub) -> None:
    acp = await start_acp()
    stub.script(hang(30))
    session = await acp.new()
    running = asyncio.create_task(acp.prompt(session, "wait"))
    await stub.wait_for_requests_async(1, timeout=20)

    await acp.conn.cancel(session_id=session)

    async with asyncio.timeout(10):
        assert await running == "cancelled"
    stub.script(text("after"))
    assert await acp.prompt(session, "go on") == "end_turn"


async def test_cancel_while_a_question_is_open_answers_the_call(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    stub.script(tool_calls(("command", {"command": "touch never.txt"})))
    acp.editor.hold_questions = True
    session = await acp.new()
    running = asyncio.create_task(acp.prompt(session, "wait"))
    await acp.editor.wait_for(lambda: bool(acp.editor.asked))

    await acp.conn.cancel(session_id=session)

    async with asyncio.timeout(10):
        assert await running == "cancelled"
    assert not (workspace / "never.txt").exists()
    (start,) = acp.editor.of("tool_call", session)
    assert acp.editor.call(start.tool_call_id)[-1].status == "failed"
