"""An MCP server's faults end to end: a crash mid-call, a server that cannot start, a call
past its timeout, ``tether.cancel``, and kill -9 of tether mid-call: every call is
answered once, and the person is told once of a server that failed."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Editor, StartEditor
from tests.e2e.test_mcp import answers, offered, server, statuses, until_offered
from tests.support.provider_stub import ProviderStub, text, tool_calls


def marked(marks: Path) -> list[str]:
    return marks.read_text().splitlines() if marks.exists() else []


async def until_marked(marks: Path, what: str, count: int = 1, timeout_s: float = 15) -> None:
    async with asyncio.timeout(timeout_s):
        while sum(line.startswith(what) for line in marked(marks)) < count:
            await asyncio.sleep(0.05)


async def server_state(editor: Editor, name: str, want: str) -> dict[str, Any]:
    """The server's live state, once it is ``want``."""
    for _ in range(300):
        listed = await editor.command("tether.tools", {})
        state = next(s for s in listed["servers"] if s["name"] == name)
        if state["state"] == want:
            return dict(state)
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} never became {want}: {state}")


def told(editor: Editor, words: str) -> list[str]:
    return [m.message for m in editor.client.messages if words in m.message]


async def test_a_crash_mid_call_answers_every_call_with_its_stderr_and_restarts_it_once(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(
        options={"tether": {"mcp": {"servers": {"sure": server(trusted=True)}}}}
    )
    await until_offered(editor, stub, {"mcp__sure__look"})
    stub.script(
        tool_calls(
            ("mcp__sure__look", {"what": "a"}), ("mcp__sure__crash", {"last_words": "on fire"})
        ),
        text("noted"),
    )
    result = await editor.run("look, then crash")

    look, crash = answers(stub.requests[-1])
    for answer in (look, crash):  # the look was in flight when the server died
        assert "'sure' ended during the call" in answer["content"]
        assert "on fire" in answer["content"]  # its last stderr line
    assert await statuses(editor, result["session"]) == ["error", "error"]

    # Restarted once: its tools come back, and it runs.
    await until_offered(editor, stub, {"mcp__sure__look"})
    assert (await server_state(editor, "sure", "running"))["tools"] >= 4
    assert told(editor, "'sure'") == []  # a restart that worked is logged, not a dialog

    # A second end is the last: failed, its tools gone, the person told once.
    stub.script(tool_calls(("mcp__sure__crash", {"last_words": "again"})), text("noted"))
    await editor.run("crash again")
    state = await server_state(editor, "sure", "failed")
    assert "again" in state["detail"] and state["tools"] == 0
    stub.script(text("ready"))
    await editor.run("ready?")
    assert not any(name.startswith("mcp__sure__") for name in offered(stub.requests[-1]))
    (message,) = told(editor, "'sure'")
    assert "failed" in message and "again" in message


async def test_a_server_that_cannot_start_is_tried_twice_then_failed_and_told_once(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    env = {"TETHER_MCP_FAIL_START": "no database at /nowhere", "TETHER_MCP_MARKS": str(marks)}
    options = {"tether": {"mcp": {"servers": {"db": server(env=env)}}}}
    editor = await start_editor(options=options)

    state = await server_state(editor, "db", "failed")

    assert "could not start" in state["detail"] and "no database at /nowhere" in state["detail"]
    assert marked(marks) and len(marked(marks)) == 2  # started, and restarted once
    await asyncio.sleep(0.5)
    (message,) = told(editor, "'db'")
    assert "no database at /nowhere" in message


async def test_a_call_past_its_timeout_is_cancelled_on_the_server_too(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    slow = server(timeout_s=1, env={"TETHER_MCP_MARKS": str(marks)})
    editor = await start_editor(options={"tether": {"mcp": {"servers": {"plain": slow}}}})
    await until_offered(editor, stub, {"mcp__plain__slow"})
    editor.answers = ["Allow"]
    stub.script(tool_calls(("mcp__plain__slow", {"seconds": 7})), text("done"))

    result = await editor.run("sleep")

    (answer,) = answers(stub.requests[-1])
    assert "longer than 1 s" in answer["content"] and "cancelled" in answer["content"]
    assert await statuses(editor, result["session"]) == ["error"]
    await until_marked(marks, "slow 7.0 cancelled")  # notifications/cancelled reached it


async def test_tether_cancel_cancels_an_mcp_call_in_flight(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    plain = server(env={"TETHER_MCP_MARKS": str(marks)})
    editor = await start_editor(options={"tether": {"mcp": {"servers": {"plain": plain}}}})
    await until_offered(editor, stub, {"mcp__plain__slow"})
    editor.answers = ["Allow"]
    stub.script(tool_calls(("mcp__plain__slow", {"seconds": 30})), text("never"))
    turn = asyncio.create_task(editor.run("sleep long"))
    await until_marked(marks, "slow 30.0 started")
    session = editor.updates[-1]["session"]

    assert await editor.command("tether.cancel", {"session": session}) == {"cancelled": True}

    async with asyncio.timeout(10):
        assert (await turn)["status"] == "cancelled"
    assert await statuses(editor, session) == ["interrupted"]  # it had started
    await until_marked(marks, "slow 30.0 cancelled")


async def test_kill_9_of_tether_mid_call_leaves_every_call_answered_once(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    sure = server(trusted=True, env={"TETHER_MCP_MARKS": str(marks), "TETHER_MCP_LOOK_S": "60"})
    options = {"tether": {"mcp": {"servers": {"sure": sure}}}}
    editor = await start_editor(options=options)
    await until_offered(editor, stub, {"mcp__sure__look"})
    stub.script(tool_calls(("mcp__sure__look", {"what": "a"}), ("mcp__sure__look", {"what": "b"})))
    turn = asyncio.create_task(editor.run("look long"))
    await until_marked(marks, "look ", count=2)
    session = editor.updates[-1]["session"]

    editor.kill()
    turn.cancel()

    restarted = await start_editor(options=options)
    assert await statuses(restarted, session) == ["interrupted", "interrupted"]
    stub.script(text("after"))
    await restarted.run("go on", session=session)
    sent = answers(stub.requests[-1])
    assert len(sent) == 2 and all(m["content"].startswith("interrupted") for m in sent)
    # The orphaned server saw its stdin close and ended: no process is left behind.
    pid = int(re.findall(r"pid=(\d+)", marked(marks)[0])[0])
    async with asyncio.timeout(10):
        while _alive(pid):
            await asyncio.sleep(0.1)


def _alive(pid: int) -> bool:
    """Whether the process runs (a zombie no init has reaped yet has ended)."""
    if sys.platform == "win32":
        return False  # no pid check there: the Job Object ends the tree
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (macOS): ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z"
