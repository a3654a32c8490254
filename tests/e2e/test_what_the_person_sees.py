"""What a person sees while a turn runs (contract v2): a command's output as it comes and
what was cut off when it is stopped, the context used after each request, and which of
their unsaved documents a command will not see."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from tests.e2e.conftest import StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls


def of_kind(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["kind"] == kind]


async def test_a_commands_output_streams_before_its_result(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(
        tool_calls(("command", {"command": "echo first; sleep 1; echo second"})), text("ok")
    )
    editor.answers = ["Allow"]

    result = await editor.run("run it")

    assert result["status"] == "done"
    (call,) = of_kind(editor.updates, "tool_call")
    outputs = of_kind(editor.updates, "output")
    assert {u["call_id"] for u in outputs} == {call["call_id"]}
    assert "".join(u["text"] for u in outputs) == "first\nsecond\n"
    assert len(outputs) == 2  # "first" went out while the command still slept
    order = [u["kind"] for u in editor.updates if u["kind"] in ("output", "tool_result")]
    assert order == ["output", "output", "tool_result"]


async def test_a_cancelled_commands_answer_keeps_what_it_had_printed(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(tool_calls(("command", {"command": "echo partial-result; sleep 30"})))
    editor.answers = ["Allow"]
    running = asyncio.create_task(editor.run("run it"))
    await editor.wait_for_update(lambda u: u["kind"] == "output")

    session = of_kind(editor.updates, "output")[0]["session"]
    assert await editor.command("tether.cancel", {"session": session}) == {"cancelled": True}
    assert (await running)["status"] == "cancelled"

    (answer,) = [m for m in (await editor.history(session))["messages"] if m["role"] == "tool"]
    assert answer["status"] == "interrupted"
    assert "Its output until then (the last of it):\npartial-result" in answer["content"]


async def test_each_provider_request_is_followed_by_the_context_it_used(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"turn": {"context_tokens": 50_000}}})
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(tool_calls(("fs-read", {"path": "a.txt"})), text("done"))

    await editor.run("read it")

    usage = of_kind(editor.updates, "usage")
    assert len(usage) == len(stub.requests) == 2
    for update in usage:
        assert update["context_window"] == 50_000
        assert update["input_tokens"] > 0 and update["output_tokens"] > 0
        assert update["context_tokens"] == update["input_tokens"] + update["output_tokens"]
    assert usage[1]["input_tokens"] > usage[0]["input_tokens"]  # the context grew


async def test_a_command_names_the_unsaved_documents_it_will_not_see(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.py").write_text("X = 1\n")
    editor.open("a.py", "X = 2\n")  # changed in the editor, not saved
    command = "python3 -c 'import a; print(a.X)'"
    stub.script(tool_calls(("command", {"command": command})), text("ok"))
    editor.answers = ["Allow"]

    await editor.run("check X")

    (dialog,) = editor.dialogs
    assert "Unsaved in the editor (the command sees the files on disk): a.py" in dialog
    (answer,) = [m for m in stub.requests[1]["messages"] if m["role"] == "tool"]
    assert answer["content"].startswith("exit code: 0\n1\n")  # the file on disk
    assert "unsaved changes in a.py" in answer["content"]


async def test_the_progress_shows_the_running_commands_time_and_last_line(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    command = "echo compiling; sleep 1; echo 'linking tether'; sleep 1"
    stub.script(tool_calls(("command", {"command": command})), text("ok"))
    editor.answers = ["Allow"]

    await editor.run("build")

    token = editor.progress_of("build")
    # pytest-lsp keeps each report's value (typed there as the whole ProgressParams).
    reports: list[object] = list(editor.client.progress_reports[token])
    messages = [r.message for r in reports if isinstance(r, types.WorkDoneProgressReport)]
    assert f"command: {command}" in messages  # the call, as it starts
    assert "command (1 s): linking tether" in messages or "command (2 s): linking tether" in (
        messages
    )
    assert any(m and m.startswith("command (0 s): compiling") for m in messages)
