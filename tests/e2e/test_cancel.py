"""Three routes end a running turn with status `cancelled`, and shutdown is clean."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import Editor, StartEditor
from tests.support.provider_stub import ProviderStub, hang, text, tool_calls


async def start_hanging_turn(editor: Editor, stub: ProviderStub, msg_id: str) -> asyncio.Task[Any]:
    """Start a turn and return once its request hangs at the provider."""
    stub.script(hang(30))
    sent = len(stub.requests)
    task = asyncio.create_task(editor.command("tether.run", {"prompt": "wait"}, msg_id=msg_id))
    await editor.wait_for_update(lambda u: u["kind"] == "status" and u["status"] == "running")
    await stub.wait_for_requests_async(sent + 1, timeout=10)
    return task


async def assert_cancelled(editor: Editor, task: asyncio.Task[Any]) -> None:
    async with asyncio.timeout(10):
        result = await task
    assert result["status"] == "cancelled"
    await editor.wait_for_update(lambda u: u["kind"] == "status" and u["status"] == "cancelled")
    sessions = (await editor.command("tether.sessions", {}))["sessions"]
    assert sessions[0]["status"] == "cancelled"


async def test_tether_cancel_ends_the_turn(start_editor: StartEditor, stub: ProviderStub) -> None:
    editor = await start_editor()
    task = await start_hanging_turn(editor, stub, "run-1")
    session = next(u["session"] for u in editor.updates)

    assert await editor.command("tether.cancel", {"session": session}) == {"cancelled": True}
    await assert_cancelled(editor, task)
    assert await editor.command("tether.cancel", {"session": session}) == {"cancelled": False}


async def test_cancelling_the_progress_ends_the_turn(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    task = await start_hanging_turn(editor, stub, "run-2")
    token = editor.progress_of("wait")
    begin: object = editor.client.progress_reports[token][0]
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable is True

    editor.client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=token))
    await assert_cancelled(editor, task)


async def test_cancel_request_on_tether_run_ends_the_turn(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    task = await start_hanging_turn(editor, stub, "run-3")

    editor.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="run-3"))
    await assert_cancelled(editor, task)


async def test_a_cancelled_session_can_go_on(start_editor: StartEditor, stub: ProviderStub) -> None:
    editor = await start_editor()
    task = await start_hanging_turn(editor, stub, "run-4")
    session = next(u["session"] for u in editor.updates)
    await editor.command("tether.cancel", {"session": session})
    await task

    stub.script(text("back again"))
    result = await editor.run("go on", session=session)

    assert result["status"] == "done"
    contents = [m["content"] for m in stub.requests[-1]["messages"][1:]]
    assert contents == ["wait", "go on"]


async def test_shutdown_while_a_turn_runs_is_clean(
    start_editor: StartEditor, stub: ProviderStub, home: Path
) -> None:
    editor = await start_editor()
    task = await start_hanging_turn(editor, stub, "run-5")

    async with asyncio.timeout(10):
        await editor.client.shutdown_session()
        result = await task
    assert result["status"] == "cancelled"
    process = editor.client._server
    assert process is not None
    async with asyncio.timeout(10):
        assert await process.wait() == 0

    again = await start_editor()
    sessions = (await again.command("tether.sessions", {}))["sessions"]
    assert sessions[0]["status"] == "cancelled"


async def test_an_editor_that_hangs_up_mid_command_ends_it_as_shutdown_would(
    start_editor: StartEditor, stub: ProviderStub, home: Path
) -> None:
    """No `shutdown`, no `exit`: the editor's end of stdin just closes (it crashed, or was
    killed). The command is stopped, its call answered and stored, and the server exits."""
    editor = await start_editor()
    ticks = editor.workspace / "ticks.txt"
    ticking = "(while true; do echo tick >> ticks.txt; sleep 0.05; done) & sleep 30"
    stub.script(tool_calls(("command", {"command": ticking})), hang(30))
    editor.answers = ["Allow"]
    running = asyncio.create_task(editor.run("tick"))
    async with asyncio.timeout(10):
        while not (ticks.exists() and ticks.stat().st_size):
            await asyncio.sleep(0.02)
    session = next(u["session"] for u in editor.updates)
    process = editor.client._server
    assert process is not None and process.stdin is not None

    process.stdin.close()
    async with asyncio.timeout(10):
        assert await process.wait() == 0
    # closed as after `shutdown`: SQLite removes a database's log when its last user closes it
    assert not list(home.rglob("*-wal"))
    running.cancel()

    size = ticks.stat().st_size
    await asyncio.sleep(0.5)  # a survivor would have ticked ten times by now
    assert ticks.stat().st_size == size
    again = await start_editor()
    history = await again.history(session)
    (call,) = [m for m in history["messages"] if m["role"] == "tool"]
    assert "cancelled" in call["content"]


# pytest-lsp's checks know only the tokens a server asked the client to create; a token
# the client itself sends with its request (LSP's WorkDoneProgressParams) is as valid.
@pytest.mark.filterwarnings("ignore:Unknown progress token")
async def test_a_progress_the_editor_names_with_its_request_reports_the_turn(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    """An editor may send a workDoneToken with `tether.run`: the turn reports on it (no
    `window/workDoneProgress/create` for a token of tether's own), and cancelling it ends
    the turn."""
    editor = await start_editor()
    stub.script(hang(30))
    sent = len(stub.requests)
    params = types.ExecuteCommandParams(
        command="tether.run", arguments=[{"prompt": "named"}], work_done_token="editor-42"
    )
    task = asyncio.create_task(
        editor.client.protocol.send_request_async(types.WORKSPACE_EXECUTE_COMMAND, params)
    )
    await editor.wait_for_update(lambda u: u["kind"] == "status" and u["status"] == "running")
    await stub.wait_for_requests_async(sent + 1, timeout=10)
    async with asyncio.timeout(10):
        while editor.progress_of("named") is None:
            await asyncio.sleep(0.01)

    assert editor.progress_of("named") == "editor-42"
    own = [t for t in editor.client.progress_reports if not str(t).startswith("tether-index-")]
    assert own == ["editor-42"]
    editor.client.window_work_done_progress_cancel(
        types.WorkDoneProgressCancelParams(token="editor-42")
    )
    await assert_cancelled(editor, task)
    end = editor.client.progress_reports["editor-42"][-1]
    assert isinstance(end, types.WorkDoneProgressEnd)
