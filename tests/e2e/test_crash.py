"""kill -9 mid-turn loses nothing that finished; a new server continues the session."""

from __future__ import annotations

import asyncio

from tests.e2e.conftest import StartEditor
from tests.support.provider_stub import ProviderStub, hang, text, tool_calls


async def test_kill_9_mid_turn_then_restart_continues_with_a_valid_request(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("kept across the crash\n")
    stub.script(tool_calls(("fs-read", {"path": "a.txt"}), ("fs-list", {})), hang(60))
    turn = asyncio.create_task(editor.run("read a.txt"))
    await stub.wait_for_requests_async(2, timeout=15)  # the tools ran; the second request hangs
    session = next(u["session"] for u in editor.updates)

    editor.kill()
    turn.cancel()

    restarted = await start_editor()
    listed = (await restarted.command("tether.sessions", {}))["sessions"]
    assert [(s["id"], s["status"]) for s in listed] == [(session, "interrupted")]
    stub.script(text("continuing"))
    result = await restarted.run("go on", session=session)

    assert result["status"] == "done"
    messages = stub.requests[-1]["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    call_ids = [c["id"] for c in messages[2]["tool_calls"]]
    assert [m["tool_call_id"] for m in messages[3:5]] == call_ids
    assert "kept across the crash" in messages[3]["content"]
    assert messages[-1]["content"] == "go on"
