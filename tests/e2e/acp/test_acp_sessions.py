"""ACP sessions end to end: initialize, session/new, a prompt's updates, load, list, resume."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, RequestError, text_block

from tests.e2e.acp.conftest import Acp, StartAcp
from tests.e2e.conftest import StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls


async def test_initialize_advertises_load_list_resume_and_embedded_context(
    start_acp: StartAcp,
) -> None:
    acp = await start_acp()
    answer = await acp.conn.initialize(protocol_version=PROTOCOL_VERSION)

    capabilities = answer.agent_capabilities
    assert answer.protocol_version == PROTOCOL_VERSION
    assert capabilities is not None and capabilities.load_session is True
    assert capabilities.prompt_capabilities is not None
    assert capabilities.prompt_capabilities.embedded_context is True
    assert capabilities.prompt_capabilities.image is False
    sessions = capabilities.session_capabilities
    assert sessions is not None and sessions.list is not None and sessions.resume is not None
    assert answer.agent_info is not None and answer.agent_info.name == "tether"


async def test_a_prompt_streams_its_answer_and_ends_the_turn(
    start_acp: StartAcp, stub: ProviderStub
) -> None:
    acp = await start_acp()
    stub.script(text("hello from the model"))
    session = await acp.new()

    assert await acp.prompt(session, "say hello") == "end_turn"

    assert acp.editor.said(session) == "hello from the model"
    assert stub.requests[0]["messages"][-1]["content"] == "say hello"
    (usage,) = acp.editor.of("usage_update", session)
    assert usage.used > 0 and usage.size > 0


async def test_load_replays_the_history_as_updates(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    first = await start_acp()
    (workspace / "a.py").write_text("print('a')\n")
    stub.script(tool_calls(("fs-read", {"path": "a.py"})), text("it prints a"))
    session = await first.new()
    await first.prompt(session, "what does a.py do?")
    await first.conn.close()

    second = await start_acp()
    await second.conn.load_session(cwd=str(workspace), session_id=session)

    told = [u.session_update for s, u in second.editor.updates if s == session]
    assert told == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
    user, call, result, answer = (u for _, u in second.editor.updates)
    assert user.content.text == "what does a.py do?"
    assert call.kind == "read" and call.title == "fs-read a.py"
    assert result.status == "completed" and "print('a')" in result.content[0].content.text
    assert answer.content.text == "it prints a"


async def test_list_gives_each_session_with_the_title_of_its_first_prompt(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    stub.script(text("one"), text("two"))
    first, second = await acp.new(), await acp.new()
    await acp.prompt(first, "the first session")
    await acp.prompt(second, "the second session")

    listed = (await acp.conn.list_sessions(cwd=str(workspace))).sessions
    everywhere = (await acp.conn.list_sessions()).sessions

    assert {(s.session_id, s.title) for s in listed} == {
        (first, "the first session"),
        (second, "the second session"),
    }
    assert all(s.cwd == str(workspace) and s.updated_at for s in listed)
    assert {s.session_id for s in everywhere} >= {first, second}


async def test_resume_takes_a_session_up_without_replaying_it(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    first = await start_acp()
    stub.script(text("one"), text("two"))
    session = await first.new()
    await first.prompt(session, "remember 42")
    await first.conn.close()

    second = await start_acp()
    await second.conn.resume_session(cwd=str(workspace), session_id=session)
    assert second.editor.updates == []
    assert await second.prompt(session, "what was it?") == "end_turn"

    contents = [m["content"] for m in stub.requests[1]["messages"]]
    assert "remember 42" in contents and "what was it?" in contents


async def test_a_session_of_the_lsp_front_loads_over_acp_and_back(
    start_acp: StartAcp, start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    editor = await start_editor()
    stub.script(text("from vs code"))
    started = (await editor.run("asked in vs code"))["session"]

    acp = await start_acp()
    await acp.conn.load_session(cwd=str(workspace), session_id=started)
    stub.script(text("from zed"))
    assert await acp.prompt(started, "asked in zed") == "end_turn"

    messages = (await editor.history(started))["messages"]
    assert [m["content"] for m in messages] == [
        "asked in vs code",
        "from vs code",
        "asked in zed",
        "from zed",
    ]
    replayed = [u.content.text for u in acp.editor.of("user_message_chunk", started)]
    assert replayed == ["asked in vs code"]


async def test_a_call_parked_over_acp_is_approved_in_the_lsp_front(
    start_acp: StartAcp, start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    stub.script(tool_calls(("command", {"command": "echo ok > approved.txt"})), text("ran"))
    acp.editor.answers = [None]  # dismissed: the call parks
    session = await acp.new()
    await acp.prompt(session, "park it")
    await acp.conn.close()

    editor = await start_editor()
    result = await editor.command("tether.approve", {"session": session})

    assert result["status"] == "done"
    assert (workspace / "approved.txt").read_text() == "ok\n"


async def test_unknown_sessions_and_bad_cwds_are_refused_by_name(
    start_acp: StartAcp, workspace: Path
) -> None:
    acp = await start_acp()

    with pytest.raises(RequestError) as unknown:
        await acp.conn.load_session(cwd=str(workspace), session_id="no-such-session")
    with pytest.raises(RequestError) as relative:
        await acp.conn.new_session(cwd="relative/dir")
    with pytest.raises(RequestError) as not_loaded:
        await acp.conn.prompt(session_id="0123456789ab", prompt=[text_block("hi")])

    assert unknown.value.code == -32602 and "no-such-session" in str(unknown.value)
    assert relative.value.code == -32602 and "absolute" in str(relative.value)
    assert not_loaded.value.code == -32602 and "session/load" in str(not_loaded.value)


async def test_a_call_parked_in_the_lsp_front_is_decided_in_the_next_acp_prompt(
    start_acp: StartAcp, start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    editor = await start_editor(options={"tether": {"approval": {"dialogs": False}}})
    stub.script(tool_calls(("command", {"command": "echo ok > from-vscode.txt"})))
    parked = await editor.run("make a file")
    assert parked["status"] == "awaiting_approval"
    stub.script(text("made it"), text("and this is the new prompt's answer"))

    acp = await start_acp()
    await acp.conn.resume_session(cwd=str(workspace), session_id=parked["session"])
    acp.editor.answers = ["allow"]
    assert await acp.prompt(parked["session"], "go on") == "end_turn"

    ((asked, options),) = acp.editor.asked
    assert asked.title == "echo ok > from-vscode.txt"
    assert [o.kind for o in options] == [
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
    ]
    assert (workspace / "from-vscode.txt").read_text() == "ok\n"
    assert acp.editor.said(parked["session"]) == "made itand this is the new prompt's answer"
    assert stub.requests[2]["messages"][-1]["content"] == "go on"


async def parked_command(start_acp: StartAcp, stub: ProviderStub) -> tuple[Acp, str]:
    """A client, and a session whose command (`touch never.txt`) waits: its dialog was
    dismissed."""
    acp = await start_acp()
    stub.script(tool_calls(("command", {"command": "touch never.txt"})))
    acp.editor.answers = [None]  # parked
    session = await acp.new()
    await acp.prompt(session, "park it")
    return acp, session


async def test_a_waiting_call_left_undecided_is_set_aside_by_the_new_prompt(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp, session = await parked_command(start_acp, stub)
    stub.script(text("understood"))

    acp.editor.answers = [None]  # asked again, and dismissed again
    assert await acp.prompt(session, "never mind") == "end_turn"

    assert len(acp.editor.asked) == 2 and not (workspace / "never.txt").exists()
    (answer,) = [m for m in stub.requests[1]["messages"] if m["role"] == "tool"]
    assert "new message" in answer["content"]


async def test_each_cwd_is_its_own_workspace(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    acp = await start_acp()
    here = await acp.new()
    there = (await acp.conn.new_session(cwd=str(other))).session_id
    (other / "only-there.txt").write_text("there\n")
    stub.script(tool_calls(("fs-read", {"path": "only-there.txt"})), text("read"))

    await acp.prompt(there, "read it")

    listed = (await acp.conn.list_sessions(cwd=str(other))).sessions
    assert [s.session_id for s in listed] == [there] and here != there
    (read,) = [m for m in stub.requests[1]["messages"] if m["role"] == "tool"]
    assert "there" in read["content"]


async def test_list_pages_and_refuses_a_cursor_it_did_not_give(
    start_acp: StartAcp, workspace: Path
) -> None:
    acp = await start_acp()
    made = {await acp.new() for _ in range(3)}

    first = await acp.conn.list_sessions(cwd=str(workspace))
    with pytest.raises(RequestError) as bad:
        await acp.conn.list_sessions(cwd=str(workspace), cursor="²")
    with pytest.raises(RequestError) as huge:
        await acp.conn.load_session(cwd=str(workspace), session_id="x" * 100_000)

    assert {s.session_id for s in first.sessions} == made and first.next_cursor is None
    assert bad.value.code == -32602 and "cursor" in str(bad.value)
    assert huge.value.code == -32602 and len(str(huge.value)) < 400


async def test_a_cancel_while_waiting_calls_are_decided_ends_the_prompt_cancelled(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp, session = await parked_command(start_acp, stub)
    acp.editor.answer_when = asyncio.Event()
    running = asyncio.create_task(acp.prompt(session, "and now?"))
    await acp.editor.wait_for(lambda: len(acp.editor.asked) == 2)

    await acp.conn.cancel(session_id=session)
    acp.editor.answer_when.set()  # the client answers its open question `cancelled`

    async with asyncio.timeout(10):
        assert await running == "cancelled"
    assert len(stub.requests) == 1 and not (workspace / "never.txt").exists()
    await acp.conn.load_session(cwd=str(workspace), session_id=session)
    ended = [u for u in acp.editor.of("tool_call_update", session) if u.status == "failed"]
    assert ended and "cancel" in ended[-1].content[0].content.text
