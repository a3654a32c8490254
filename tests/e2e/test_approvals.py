"""Approvals end to end: dialogs, parking, code actions, restarts, rules, deny and cancel."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.e2e.conftest import Editor, StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls


async def tool_messages(editor: Editor, session: str) -> list[dict[str, Any]]:
    return [m for m in (await editor.history(session))["messages"] if m["role"] == "tool"]


def answers_sent(stub: ProviderStub, request: int = 1) -> list[dict[str, Any]]:
    return [m for m in stub.requests[request]["messages"] if m["role"] == "tool"]


async def test_a_read_after_an_allowed_command_sees_its_effect(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "before.txt").write_text("there before\n")
    stub.script(
        tool_calls(
            ("fs-read", {"path": "before.txt"}),
            ("command", {"command": "echo made-by-command > made.txt"}),
            ("fs-read", {"path": "made.txt"}),
        ),
        text("done"),
    )
    editor.answers = ["Allow"]

    result = await editor.run("make a file")

    assert result["status"] == "done"
    assert len(editor.dialogs) == 1 and "echo made-by-command > made.txt" in editor.dialogs[0]
    first, command, after = answers_sent(stub)
    assert "there before" in first["content"]
    assert "exit code: 0" in command["content"]
    assert "made-by-command" in after["content"]
    statuses = [m["status"] for m in await tool_messages(editor, result["session"])]
    assert statuses == ["ok", "ok", "ok"]


async def test_two_commands_in_one_reply_are_each_asked_in_order(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(
        tool_calls(
            ("command", {"command": "echo one >> log.txt"}),
            ("command", {"command": "echo two >> log.txt"}),
        ),
        text("done"),
    )
    editor.answers = ["Allow", "Allow"]

    await editor.run("log twice")

    assert ["one" in editor.dialogs[0], "two" in editor.dialogs[1]] == [True, True]
    assert (editor.workspace / "log.txt").read_text() == "one\ntwo\n"


async def test_deny_with_a_reason_reaches_the_model(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"approval": {"dialogs": False}}})
    stub.script(tool_calls(("command", {"command": "rm -rf build"})), text("understood"))

    parked = await editor.run("clean")
    assert parked["status"] == "awaiting_approval" and editor.dialogs == []
    (pending,) = parked["pending"]
    assert pending["tool"] == "command" and pending["summary"] == "rm -rf build"

    result = await editor.command(
        "tether.deny", {"session": parked["session"], "reason": "keep the build"}
    )

    assert result["status"] == "done"
    (answer,) = answers_sent(stub)
    assert "keep the build" in answer["content"]
    statuses = [m["status"] for m in await tool_messages(editor, parked["session"])]
    assert statuses == ["denied"]


async def test_a_dismissed_dialog_parks_and_a_new_server_resumes_it(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("first read\n")
    stub.script(
        tool_calls(
            ("fs-read", {"path": "a.txt"}),
            ("command", {"command": "echo resumed > r.txt"}),
            ("fs-read", {"path": "r.txt"}),
        ),
        text("all done"),
    )
    parked = await editor.run("go")  # no answers: the dialog is dismissed

    assert parked["status"] == "awaiting_approval"
    assert [p["tool"] for p in parked["pending"]] == ["command"]
    history = await editor.history(parked["session"])
    assert [p["call_id"] for p in history["pending"]] == [parked["pending"][0]["call_id"]]
    editor.kill()

    restarted = await start_editor()
    result = await restarted.command("tether.approve", {"session": parked["session"]})

    assert result["status"] == "done" and result["answer"] == "all done"
    assert restarted.dialogs == []  # decided: not asked again
    first, command, after = answers_sent(stub)
    assert "first read" in first["content"] and "exit code: 0" in command["content"]
    assert "resumed" in after["content"]
    statuses = [m["status"] for m in await tool_messages(restarted, parked["session"])]
    assert statuses == ["ok", "ok", "ok"]


async def test_code_actions_approve_and_preview_a_pending_patch(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"approval": {"dialogs": False}}})
    (editor.workspace / "app.py").write_text("x = 1\n")
    uri = editor.open("app.py", "x = 1\ny = 2\n")  # unsaved: y exists only in the buffer
    patch = {"path": "app.py", "edits": [{"old": "y = 2", "new": "y = 3"}]}
    stub.script(tool_calls(("patch", patch)), text("patched"))
    parked = await editor.run("bump y")
    assert parked["status"] == "awaiting_approval"

    actions = await editor.client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=types.Range(
                start=types.Position(line=0, character=0), end=types.Position(line=0, character=0)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    titles = [a.title for a in actions or []]
    assert any(t.startswith("Allow: ") for t in titles) and any(
        t.startswith("Deny: ") for t in titles
    )
    preview = next(a for a in actions or [] if a.title.startswith("Apply patch"))
    assert isinstance(preview, types.CodeAction) and preview.edit is not None
    (change,) = preview.edit.document_changes or []
    assert isinstance(change, types.TextDocumentEdit)
    assert isinstance(change.edits[0], types.TextEdit) and change.edits[0].new_text == "y = 3"

    allow = next(a for a in actions or [] if a.title.startswith("Allow: "))
    assert isinstance(allow, types.CodeAction) and isinstance(allow.command, types.Command)
    result = await editor.command(allow.command.command, *(allow.command.arguments or []))

    assert result["status"] == "done"
    assert editor.texts[uri][1] == "x = 1\ny = 3\n"  # landed in the unsaved buffer
    assert (editor.workspace / "app.py").read_text() == "x = 1\n"  # disk untouched
    assert len(editor.edits) == 1


async def test_a_remembered_rule_settles_matching_calls_in_its_scope(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    echo = ("command", {"command": "echo hi"})
    stub.script(
        tool_calls(echo), text("one"), tool_calls(echo), text("two"), tool_calls(echo), text("3")
    )
    editor.answers = ["Allow always"]

    first = await editor.run("say hi")
    second = await editor.run("again", session=first["session"])
    other = await editor.run("in another session")  # the rule is the workspace's

    assert [first["status"], second["status"], other["status"]] == ["done"] * 3
    assert len(editor.dialogs) == 1
    statuses = [m["status"] for m in await tool_messages(editor, second["session"])]
    assert statuses == ["ok", "ok"]


async def test_a_session_rule_does_not_reach_other_sessions(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"approval": {"dialogs": False}}})
    echo = ("command", {"command": "echo hi"})
    stub.script(tool_calls(echo), text("one"), tool_calls(echo))
    parked = await editor.run("say hi")
    done = await editor.command(
        "tether.approve", {"session": parked["session"], "remember": "session"}
    )
    assert done["status"] == "done"

    other = await editor.run("in another session")

    assert other["status"] == "awaiting_approval"


async def test_cancel_while_a_dialog_is_open_answers_every_call(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    editor.hold_dialogs = True
    stub.script(tool_calls(("command", {"command": "echo never"}), ("fs-list", {})))
    task = asyncio.create_task(editor.run("ask me"))
    await editor.wait_for_update(lambda u: u["kind"] == "approval")
    async with asyncio.timeout(10):
        while not editor.dialogs:
            await asyncio.sleep(0.02)
    session = editor.updates[0]["session"]

    assert await editor.command("tether.cancel", {"session": session}) == {"cancelled": True}

    assert (await task)["status"] == "cancelled"
    statuses = [m["status"] for m in await tool_messages(editor, session)]
    assert statuses == ["not_executed", "not_executed"]
    assert not (editor.workspace / "never").exists()


async def test_cancelling_a_parked_turn_answers_its_pending_calls(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"approval": {"dialogs": False}}})
    stub.script(tool_calls(("command", {"command": "echo x"})), text("fine"))
    parked = await editor.run("wait")

    assert await editor.command("tether.cancel", {"session": parked["session"]}) == {
        "cancelled": True
    }

    statuses = [m["status"] for m in await tool_messages(editor, parked["session"])]
    assert statuses == ["not_executed"]
    history = await editor.history(parked["session"])
    assert history["pending"] == []
    resumed = await editor.run("go on", session=parked["session"])
    assert resumed["status"] == "done"


async def test_a_patch_with_an_ambiguous_old_is_a_clear_error_without_asking(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "twice.py").write_text("x = 1\nx = 1\n")
    patch = {"path": "twice.py", "edits": [{"old": "x = 1", "new": "x = 2"}]}
    stub.script(tool_calls(("patch", patch)), text("I will add context"))

    result = await editor.run("patch it")

    assert result["status"] == "done" and editor.dialogs == []
    (answer,) = answers_sent(stub)
    assert "occurs 2 times" in answer["content"]
    assert (editor.workspace / "twice.py").read_text() == "x = 1\nx = 1\n"


async def test_a_command_timeout_kills_it_and_its_children(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    # Outside the sandbox (its own test is in test_sandbox.py): the child's real pid.
    editor = await start_editor(options={"tether": {"sandbox": {"mode": "off"}}})
    pid_file = tmp_path / "child.pid"
    command = f"sh -c 'echo $$ > {pid_file}; sleep 30' & sleep 30"
    stub.script(tool_calls(("command", {"command": command, "timeout_s": 1})), text("slow"))
    editor.answers = ["Allow"]

    result = await editor.run("wait")

    assert result["status"] == "done"
    (answer,) = answers_sent(stub)
    assert "timed out" in answer["content"]
    child = Path(f"/proc/{pid_file.read_text().strip()}")

    def gone() -> bool:
        try:
            return "Z" in (child / "stat").read_text().split()[2]  # a zombie: killed
        except FileNotFoundError:
            return True

    # SIGKILL went to the whole group before the result was sent; dying takes a moment.
    async with asyncio.timeout(5):
        while not gone():
            await asyncio.sleep(0.01)


async def test_a_resumed_turn_is_cancelled_by_cancel_request_on_its_approve(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"approval": {"dialogs": False}}})
    stub.script(tool_calls(("command", {"command": "echo started; sleep 30"})))
    parked = await editor.run("wait a while")
    approving = asyncio.create_task(
        editor.command("tether.approve", {"session": parked["session"]}, msg_id="approve-1")
    )
    await editor.wait_for_update(lambda u: u["kind"] == "output")  # the command runs

    editor.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="approve-1"))

    async with asyncio.timeout(10):
        assert (await approving)["status"] == "cancelled"
    statuses = [m["status"] for m in await tool_messages(editor, parked["session"])]
    assert statuses == ["interrupted"]
