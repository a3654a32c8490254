"""``tether.planned``: the server says what a waiting patch would do, for the editor's diff."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from tests.e2e.conftest import Editor, StartEditor
from tests.support.provider_stub import ProviderStub, tool_calls

NO_DIALOGS = {"tether": {"approval": {"dialogs": False}}}


async def parked(editor: Editor, stub: ProviderStub, *calls: tuple[str, Any]) -> dict[str, Any]:
    stub.script(tool_calls(*calls))
    result = await editor.run("change it")
    assert result["status"] == "awaiting_approval"
    return result


async def planned(editor: Editor, session: str, call: str) -> dict[str, Any]:
    return dict(await editor.command("tether.planned", {"session": session, "call": call}))


async def test_a_parked_patch_is_planned_against_the_live_buffer(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options=NO_DIALOGS)
    (editor.workspace / "app.py").write_text("x = 1\n")
    editor.open("app.py", "x = 1\ny = 2\n")  # unsaved: y exists only in the buffer
    patch = {"path": "app.py", "edits": [{"old": "y = 2", "new": "y = 3"}]}
    result = await parked(editor, stub, ("patch", patch))
    (call,) = result["pending"]

    plan = await planned(editor, result["session"], call["call_id"])

    assert plan == {
        "path": str(editor.workspace / "app.py"),
        "before": "x = 1\ny = 2\n",
        "after": "x = 1\ny = 3\n",
    }
    assert (editor.workspace / "app.py").read_text() == "x = 1\n"  # nothing applied
    history = await editor.history(result["session"])
    assert [p["call_id"] for p in history["pending"]] == [call["call_id"]]  # nor decided


async def test_a_patch_that_makes_a_file_has_a_null_before(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options=NO_DIALOGS)
    result = await parked(editor, stub, ("patch", {"path": "new.py", "content": "print(1)\n"}))

    plan = await planned(editor, result["session"], result["pending"][0]["call_id"])

    assert plan == {"path": str(editor.workspace / "new.py"), "before": None, "after": "print(1)\n"}


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("nope", "no pending call nope"),
        ("call_1", "call call_1 is a command, not a file edit"),
        ("call_2", "call call_2 does not apply to the file as it is now: edit 1: `old` not found"),
    ],
)
async def test_a_call_that_is_no_waiting_file_edit_is_an_invalid_params_error(
    start_editor: StartEditor, stub: ProviderStub, call: str, expected: str
) -> None:
    editor = await start_editor(options=NO_DIALOGS)
    (editor.workspace / "app.py").write_text("x = 1\n")
    missing = {"path": "app.py", "edits": [{"old": "not in the file", "new": "y"}]}
    result = await parked(editor, stub, ("command", {"command": "make"}), ("patch", missing))
    assert [p["call_id"] for p in result["pending"]] == ["call_1", "call_2"]

    with pytest.raises(JsonRpcException) as raised:
        await planned(editor, result["session"], call)

    assert raised.value.code == JsonRpcInvalidParams.CODE
    assert expected in raised.value.message
    assert "sessions" in await editor.command("tether.sessions", {})  # still serving


async def test_an_unknown_session_is_an_invalid_params_error(start_editor: StartEditor) -> None:
    editor = await start_editor()
    with pytest.raises(JsonRpcException) as raised:
        await planned(editor, "nope", "call_1")
    assert raised.value.code == JsonRpcInvalidParams.CODE
    assert "unknown session 'nope'" in raised.value.message


async def test_a_patch_whose_dialog_is_open_is_planned(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    editor.hold_dialogs = True
    stub.script(tool_calls(("patch", {"path": "new.py", "content": "print(1)\n"})))
    turn = asyncio.ensure_future(editor.run("make it"))
    asked = await editor.wait_for_update(lambda u: u["kind"] == "approval")

    try:
        plan = await planned(editor, asked["session"], asked["call_id"])
    finally:
        await editor.command("tether.cancel", {"session": asked["session"]})
        await turn

    assert plan["after"] == "print(1)\n"
