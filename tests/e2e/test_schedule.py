"""Scheduled tasks: run by the server through the same turn path, kept across restarts."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Editor, StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls

NUDGE = {"role": "user", "content": "batch call"}


async def tasks(editor: Editor) -> list[dict[str, Any]]:
    return list((await editor.command("tether.tasks", {}))["tasks"])


async def wait_for_status(editor: Editor, task: str, within: float = 15) -> dict[str, Any]:
    async with asyncio.timeout(within):
        while True:
            listed = {t["id"]: t for t in await tasks(editor)}
            if listed[task].get("last_status"):
                return listed[task]
            await asyncio.sleep(0.05)


async def test_a_task_runs_when_due_and_is_listed(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(text("all green"))

    task = (await editor.command("tether.schedule", {"prompt": "check CI", "every": "1s"}))["task"]
    listed = await wait_for_status(editor, task)

    assert listed["last_status"] == "done" and listed["prompt"] == "check CI"
    assert listed["last_run"] and listed["next_run"] > listed["last_run"]
    assert stub.requests[0]["messages"][-1] == {"role": "user", "content": "check CI"}
    history = await editor.history(listed["last_session"])
    assert history["messages"][-1]["content"] == "all green"

    assert await editor.command("tether.unschedule", {"task": task}) == {"removed": True}
    assert await tasks(editor) == []


async def test_bad_schedules_are_json_rpc_errors(start_editor: StartEditor) -> None:
    editor = await start_editor()
    for argument, expected in (
        ({"prompt": "x", "every": "soon"}, "invalid every"),
        ({"prompt": "x", "every": "5m", "session": "nope"}, "unknown session"),
    ):
        with pytest.raises(JsonRpcException, match=expected):
            await editor.command("tether.schedule", argument)
    with pytest.raises(JsonRpcException, match="unknown task"):
        await editor.command("tether.unschedule", {"task": "nope"})


async def test_a_scheduled_approval_parks_and_is_announced_without_a_dialog(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(tool_calls(("command", {"command": "make deploy"})))

    task = (await editor.command("tether.schedule", {"prompt": "deploy", "every": "1s"}))["task"]
    listed = await wait_for_status(editor, task)
    await editor.command("tether.unschedule", {"task": task})

    assert listed["last_status"] == "awaiting_approval"
    assert editor.dialogs == []
    assert any("make deploy" in m.message for m in editor.client.messages)
    pending = (await editor.history(listed["last_session"]))["pending"]
    assert [p["summary"] for p in pending] == ["make deploy"]


async def test_a_task_missed_while_the_server_was_down_runs_once_at_start(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    every_s = 1
    editor = await start_editor()
    await editor.command("tether.schedule", {"prompt": "tick", "every": f"{every_s}s"})
    editor.kill()
    # Wall-clock time must pass on purpose: two slots go by while no server runs (the
    # shortest interval the behaviour needs, plus a margin).
    await asyncio.sleep(2 * every_s + 0.2)

    stub.script(text("tock"), text("tock again"))
    restarted = await start_editor()
    # The next run comes from the next slot, a whole interval after the catch-up run;
    # a run per missed slot would have followed the first at once.
    await stub.wait_for_requests_async(2, timeout=15)
    (listed,) = await tasks(restarted)
    await restarted.command("tether.unschedule", {"task": listed["id"]})

    first, second = stub.arrivals[:2]
    assert second - first > every_s / 2
    assert listed["last_status"] == "done"


async def test_a_server_behind_the_terminal_client_never_runs_a_due_task(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    """`tether sessions` and friends start short-lived servers: a due task run there would
    be cancelled at their exit, and its slot spent."""
    editor = await start_editor()
    await editor.command("tether.schedule", {"prompt": "tick", "every": "1s"})
    editor.kill()
    await asyncio.sleep(1.2)  # the task is due now
    stub.script(text("tock"))

    terminal = await start_editor(client_name="tether ask")
    await asyncio.sleep(1.5)  # an editor's server runs a due task at once (test above)

    assert stub.requests == []
    (listed,) = await tasks(terminal)
    assert listed.get("last_status") is None
    await terminal.command("tether.unschedule", {"task": listed["id"]})


async def test_scheduled_turns_get_the_nudge_like_any_other(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(tool_calls(("fs-read", {"path": "a.txt"})), text("read"))

    task = (await editor.command("tether.schedule", {"prompt": "read a", "every": "1s"}))["task"]
    await wait_for_status(editor, task)
    await editor.command("tether.unschedule", {"task": task})

    assert stub.requests[1]["messages"][-1] == NUDGE
