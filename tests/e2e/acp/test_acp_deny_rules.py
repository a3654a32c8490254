"""ACP's ``reject_always`` end to end: the call is denied and a rule that denies is
remembered for the workspace; later calls it covers are denied without a question, in a new
session of another ``tether acp``, and in the LSP front, which lists the rule as one that
denies and forgets it like any other."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.acp.conftest import StartAcp
from tests.e2e.conftest import StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls

NEVER = {"command": "touch never.txt"}
WORDS = "run exactly `touch never.txt`"


def tool_answers(stub: ProviderStub, request: int) -> list[str]:
    return [m["content"] for m in stub.requests[request]["messages"] if m["role"] == "tool"]


async def test_reject_always_denies_and_a_new_session_is_denied_without_a_question(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    stub.script(tool_calls(("command", NEVER)), text("understood"))
    stub.script(tool_calls(("command", NEVER)), text("still no"))
    first = await start_acp()
    first.editor.answers = ["never"]
    assert await first.prompt(await first.new(), "make it") == "end_turn"

    second = await start_acp()  # another process: the rule lives in the store
    session = await second.new()
    assert await second.prompt(session, "make it again") == "end_turn"

    ((_, options),) = first.editor.asked
    assert [(o.option_id, o.kind) for o in options] == [
        ("allow", "allow_once"),
        ("always", "allow_always"),
        ("deny", "reject_once"),
        ("never", "reject_always"),
    ]
    assert options[3].name == f"Deny always: {WORDS}"
    assert second.editor.asked == [] and not (workspace / "never.txt").exists()
    (answered,) = tool_answers(stub, 1)
    assert answered.startswith("denied: the person denied it, and every call like it")
    (unasked,) = tool_answers(stub, 3)
    assert f"a rule the person remembered denies it, for this workspace: {WORDS}" in unasked
    assert "do not try it again" in unasked
    (start,) = second.editor.of("tool_call", session)
    assert second.editor.call(start.tool_call_id)[-1].status == "failed"


async def test_reject_always_of_a_waiting_call_denies_it_and_remembers(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    acp = await start_acp()
    stub.script(tool_calls(("command", NEVER)))
    acp.editor.answers = [None]  # the question cancelled: the call waits
    session = await acp.new()
    await acp.prompt(session, "park it")
    stub.script(text("denied then"), text("and the new prompt"))
    stub.script(tool_calls(("command", NEVER)), text("no again"))

    acp.editor.answers = ["never"]
    assert await acp.prompt(session, "go on") == "end_turn"
    assert await acp.prompt(await acp.new(), "try it in another session") == "end_turn"

    assert len(acp.editor.asked) == 2 and not (workspace / "never.txt").exists()
    assert [o.kind for o in acp.editor.asked[1][1]][-1] == "reject_always"
    (answered,) = tool_answers(stub, 1)
    assert "every call like it from now on" in answered
    assert "a rule the person remembered denies it" in tool_answers(stub, 4)[0]


async def test_a_deny_rule_denies_in_the_lsp_front_is_listed_as_deny_and_forgotten(
    start_acp: StartAcp, start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    stub.script(tool_calls(("command", NEVER)), text("ok"))
    acp = await start_acp()
    acp.editor.answers = ["never"]
    await acp.prompt(await acp.new(), "make it")
    await acp.conn.close()
    stub.script(tool_calls(("command", NEVER)), text("denied in vs code"))
    stub.script(tool_calls(("command", NEVER)))

    editor = await start_editor()
    denied = await editor.run("make it here")
    asked_before = len(editor.dialogs)
    (rule,) = (await editor.command("tether.rules", {}))["rules"]
    forgot = await editor.command("tether.forget", {"rule": rule["id"]})
    asked = await editor.run("once more", denied["session"])

    assert denied["status"] == "done" and denied["answer"] == "denied in vs code"
    assert asked_before == 0 and not (workspace / "never.txt").exists()
    assert "a rule the person remembered denies it" in tool_answers(stub, 3)[0]
    assert (rule["verdict"], rule["tool"], rule["match"], rule["scope"]) == (
        "deny",
        "command",
        WORDS,
        "workspace",
    )
    assert forgot["removed"] is True
    assert (await editor.command("tether.rules", {}))["rules"] == []
    # Forgotten: the call is asked about again (here the dialog is dismissed: it waits).
    assert asked["status"] == "awaiting_approval" and len(editor.dialogs) == 1
