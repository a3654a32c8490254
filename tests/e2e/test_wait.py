"""``"wait": false`` (contract v2): a turn's command is answered as soon as the turn holds its
session, and the turn's end comes as a status update carrying its result. Clients whose
requests time out (Emacs's jsonrpc, at 10 s) never see a long turn fail."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Editor, StartEditor
from tests.support.provider_stub import ProviderStub, hang, text, tool_calls


def ended(update: dict[str, Any], session: str) -> bool:
    return update["kind"] == "status" and update["session"] == session and bool(update["result"])


async def test_a_turn_started_without_waiting_is_answered_at_once_and_its_end_carries_the_result(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(text("the answer", chunk_size=2, delay_s=0.2))

    started = await editor.command("tether.run", {"prompt": "hi", "wait": False})

    assert started == {"session": started["session"], "status": "running"}
    assert not [u for u in editor.updates if u["kind"] == "status" and u["result"]]
    end = await editor.wait_for_update(lambda u: ended(u, started["session"]))
    assert end["status"] == "done"
    assert end["result"]["status"] == "done" and end["result"]["answer"] == "the answer"
    assert end["result"]["session"] == started["session"]


async def test_approve_and_deny_without_waiting_resume_the_parked_turn(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(
        tool_calls(("command", {"command": "echo one"})),
        tool_calls(("command", {"command": "echo two"})),
        text("done"),
    )
    parked = await editor.run("go")  # the dialog is dismissed: the call parks
    assert parked["status"] == "awaiting_approval"
    session = parked["session"]
    editor.updates.clear()

    started = await editor.command("tether.approve", {"session": session, "wait": False})
    assert started == {"session": session, "status": "running"}
    end = await editor.wait_for_update(lambda u: ended(u, session))
    assert end["result"]["status"] == "awaiting_approval"
    assert [p["arguments"]["command"] for p in end["result"]["pending"]] == ["echo two"]

    editor.updates.clear()
    denied = await editor.command(
        "tether.deny", {"session": session, "reason": "not now", "wait": False}
    )
    assert denied == {"session": session, "status": "running"}
    end = await editor.wait_for_update(lambda u: ended(u, session))
    assert end["result"] == {**end["result"], "status": "done", "answer": "done"}


async def test_a_turn_that_cannot_run_is_refused_even_without_waiting(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(text("hello"))
    session = (await editor.run("hi"))["session"]

    with pytest.raises(JsonRpcException, match=r"nothing is waiting|no calls? (are )?waiting"):
        await editor.command("tether.approve", {"session": session, "wait": False})
    with pytest.raises(JsonRpcException, match=r"unknown session|no session"):
        await editor.command("tether.run", {"prompt": "x", "session": "nope", "wait": False})
    # A refusal is the request's answer, not a failure to log with its traceback.
    await asyncio.sleep(0.2)
    assert not [m for m in editor.client.log_messages if "background turn" in m.message]


async def test_a_second_turn_on_a_running_session_is_refused_without_waiting(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(hang(30))
    started = await editor.command("tether.run", {"prompt": "slow", "wait": False})
    session = started["session"]

    with pytest.raises(JsonRpcException, match=r"busy|running"):
        await editor.command("tether.run", {"prompt": "again", "session": session, "wait": False})

    assert (await editor.command("tether.cancel", {"session": session})) == {"cancelled": True}
    end = await editor.wait_for_update(lambda u: ended(u, session))
    assert end["result"]["status"] == "cancelled"


async def test_without_wait_the_command_answers_with_the_turn_as_in_version_one(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor: Editor = await start_editor()
    stub.script(text("hello"))
    result = await editor.command("tether.run", {"prompt": "hi", "wait": True})
    assert result["status"] == "done" and result["answer"] == "hello"
