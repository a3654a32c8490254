"""A hostile model, end to end over LSP: what it can get past the person must be nothing.

Each test is an attack from issue 12 that worked before the fix: a remembered rule that
covered more than the person allowed, a dialog that hid the dangerous end of a command,
arguments that crashed a session for good or cost gigabytes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import API_KEY, SERVER, Editor, StartEditor, server_env
from tests.e2e.test_hostile_lsp import RawClient, framed
from tests.support.provider_stub import ProviderStub, text, tool_calls
from tests.support.repositories import git_repository, hostile_repository


async def tool_messages(editor: Editor, session: str) -> list[dict[str, Any]]:
    return [m for m in (await editor.history(session))["messages"] if m["role"] == "tool"]


async def test_an_exact_rule_covers_its_command_and_nothing_longer(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    # Before: `touch made` was remembered as `touch made …`, which ran `touch made pwned`
    # (as `rm build` covered `rm build -rf ~`).
    stub.script(
        tool_calls(("command", {"command": "touch made"})),
        text("ok"),
        tool_calls(("command", {"command": "touch made"})),
        text("ok again"),
        tool_calls(("command", {"command": "touch made pwned"})),
    )
    editor.answers = ["Allow always"]

    first = await editor.run("make it")
    again = await editor.run("and again", first["session"])
    assert (first["status"], again["status"]) == ("done", "done")
    words = "Allow always remembers, for this workspace: run exactly `touch made`"
    assert words in editor.dialogs[0]
    assert len(editor.dialogs) == 1, "the rule must settle the identical command unasked"

    attack = await editor.run("once more", first["session"])

    assert attack["status"] == "awaiting_approval"
    assert "touch made pwned" in editor.dialogs[1]
    assert not (editor.workspace / "pwned").exists()


async def test_a_family_rule_never_covers_a_line_that_does_more(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    git_repository(editor.workspace)
    stub.script(
        tool_calls(("command", {"command": "git status -s"})),
        text("ok"),
        tool_calls(("command", {"command": "git status --porcelain"})),
        text("ok"),
        tool_calls(
            ("command", {"command": "git status && touch pwned"}),
            ("command", {"command": "git log --output=pwned2 -1"}),
            ("command", {"command": "git grep -O'touch pwned3' a"}),
        ),
    )
    editor.answers = ["Allow always"]

    first = await editor.run("status")
    covered = await editor.run("status again", first["session"])
    assert "run `git status …` commands" in editor.dialogs[0]
    assert covered["status"] == "done" and len(editor.dialogs) == 1

    attack = await editor.run("and now", first["session"])

    assert attack["status"] == "awaiting_approval"
    assert [p["arguments"]["command"] for p in attack["pending"]] == [
        "git status && touch pwned",
        "git log --output=pwned2 -1",
        "git grep -O'touch pwned3' a",
    ]
    assert not any((editor.workspace / name).exists() for name in ("pwned", "pwned2", "pwned3"))


async def test_rules_are_listed_with_what_they_cover_and_can_be_forgotten(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(
        tool_calls(("command", {"command": "echo hi"})),
        text("ok"),
        tool_calls(("command", {"command": "echo hi"})),
    )
    editor.answers = ["Allow always"]
    first = await editor.run("say hi")

    (rule,) = (await editor.command("tether.rules", {}))["rules"]
    assert (rule["tool"], rule["match"], rule["scope"]) == (
        "command",
        "run exactly `echo hi`",
        "workspace",
    )
    assert (await editor.command("tether.forget", {"rule": rule["id"]}))["removed"] is True
    assert (await editor.command("tether.forget", {"rule": rule["id"]}))["removed"] is False
    assert (await editor.command("tether.rules", {}))["rules"] == []

    again = await editor.run("again", first["session"])
    assert again["status"] == "awaiting_approval" and len(editor.dialogs) == 2


async def test_the_dialog_shows_the_end_of_a_long_command_and_offers_no_rule_for_it(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    line = "echo '" + "x" * 3000 + "' && touch the-dangerous-end"
    stub.script(tool_calls(("command", {"command": line})))

    result = await editor.run("go")

    assert result["status"] == "awaiting_approval"
    (dialog,) = editor.dialogs
    assert "touch the-dangerous-end" in dialog
    assert f"the command is {len(line):,} long" in dialog
    assert editor.dialog_actions[0] == ["Allow", "Deny"]


async def test_a_diff_too_long_to_show_is_said_to_be_cut_and_offers_no_rule(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(tool_calls(("patch", {"path": "big.txt", "content": "line\n" * 200})))
    await editor.run("go")
    assert "[the diff is cut:" in editor.dialogs[0]
    assert editor.dialog_actions[0] == ["Allow", "Deny"]


async def test_arguments_nested_deep_are_an_error_and_the_session_still_loads(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    deep = '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"
    stub.script(tool_calls(("fs-read", deep), ("fs-list", {})), text("ok"))

    result = await editor.run("go")

    assert result["status"] == "done"
    first, second = await tool_messages(editor, result["session"])
    assert first["status"] == "error" and "nest 100001 levels deep" in first["content"]
    assert second["status"] == "ok"  # its sibling is unaffected
    history = await editor.history(result["session"])
    (call,) = history["messages"][1]["tool_calls"][:1]
    assert call["arguments"].startswith("[not shown: the arguments nest")


async def test_a_number_json_cannot_carry_is_an_error_and_never_reaches_the_editor(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    # Python reads NaN; the editor's JSON.parse does not, and an Anthropic request holding
    # it could not be encoded at all: every later round of the session failed.
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("one\n")
    stub.script(tool_calls(("fs-read", '{"path": "a.txt", "limit": NaN}')), text("ok"))

    result = await editor.run("go")

    assert result["status"] == "done"
    (answer,) = await tool_messages(editor, result["session"])
    assert answer["status"] == "error" and "NaN is not a JSON number" in answer["content"]
    history = await editor.history(result["session"])
    (call,) = history["messages"][1]["tool_calls"]
    assert call["arguments"] == '{"path": "a.txt", "limit": NaN}'  # shown as sent, as text


async def test_huge_arguments_are_refused_and_never_sent_whole_to_the_editor(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    content = "x" * (9 * 2**20)
    stub.script(tool_calls(("patch", {"path": "huge.txt", "content": content})), text("ok"))

    result = await editor.run("go")

    assert result["status"] == "done"
    (answer,) = await tool_messages(editor, result["session"])
    assert answer["status"] == "error" and "the limit is" in answer["content"]
    (call,) = [u for u in editor.updates if u["kind"] == "tool_call"]
    assert len(str(call["arguments"])) < 10_000
    assert not (editor.workspace / "huge.txt").exists()


async def test_read_only_git_tools_run_no_program_the_repository_names(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    hostile_repository(editor.workspace)
    stub.script(
        tool_calls(
            ("git-status", {}), ("git-diff", {}), ("git-head", {}), ("git-diff", {"rev": "HEAD"})
        ),
        text("ok"),
    )

    result = await editor.run("look at git")

    assert result["status"] == "done"
    statuses = [m["status"] for m in await tool_messages(editor, result["session"])]
    assert statuses == ["ok"] * 4
    assert sorted(p.name for p in editor.workspace.glob("PWNED*")) == []


async def test_a_git_command_a_rule_allows_runs_no_program_the_repository_names(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    git_repository(editor.workspace)
    stub.script(
        tool_calls(("command", {"command": "git diff --stat"})),
        text("ok"),
        tool_calls(("command", {"command": "git diff"})),
        text("ok"),
    )
    editor.answers = ["Allow always"]
    first = await editor.run("diff")
    # The repository turns hostile after the rule was made (a checkout, a patch).
    hostile_repository(editor.workspace, fresh=False)

    second = await editor.run("diff again", first["session"])

    assert second["status"] == "done" and len(editor.dialogs) == 1
    assert sorted(p.name for p in editor.workspace.glob("PWNED*")) == []


async def test_the_key_reaches_neither_the_log_nor_a_command(
    stub: ProviderStub, home: Path, workspace: Path
) -> None:
    """At --log-level DEBUG pygls logs every message, the editor's initializationOptions
    with the key among them; an approved command could read its parent's environment."""
    init_key = "sk-init-options-key-0987654321"
    process = await asyncio.create_subprocess_exec(
        *SERVER, "--log-level", "DEBUG",
        env=server_env(stub, home),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    client = RawClient(process, workspace)
    # No dialogs: this raw client answers no requests, so the command parks.
    tether: dict[str, Any] = {"provider": {"api_key": init_key}, "approval": {"dialogs": False}}
    params = client.init_params() | {"initializationOptions": {"tether": tether}}
    await client.initialized(await client.send_request("initialize", params))
    read_parent = "cat /proc/$PPID/environ | tr '\\0' '\\n'; env"
    stub.script(tool_calls(("command", {"command": read_parent})), text("done"))

    parked = (await client.request("workspace/executeCommand", run("read it")))["result"]
    done = await client.request("workspace/executeCommand", approve(parked["session"]))
    history = await client.request("workspace/executeCommand", history_of(parked["session"]))
    await client.request("shutdown", None)
    await client.send(framed(b'{"jsonrpc": "2.0", "method": "exit"}'))
    await process.wait()
    log = await client.stderr

    assert done["result"]["status"] == "done"
    (answer,) = [m for m in history["result"]["messages"] if m["role"] == "tool"]
    assert "PATH=" in answer["content"]  # it did read the environments
    for key in (API_KEY, init_key):
        assert key[:12] not in answer["content"]
        assert key[:12] not in log
    assert "Sending data" in log or "api_key" in log  # DEBUG did log the messages


def run(prompt: str) -> dict[str, Any]:
    return {"command": "tether.run", "arguments": [{"prompt": prompt}]}


def approve(session: str) -> dict[str, Any]:
    return {"command": "tether.approve", "arguments": [{"session": session}]}


def history_of(session: str) -> dict[str, Any]:
    return {"command": "tether.history", "arguments": [{"session": session}]}


async def test_two_calls_with_one_id_never_run_on_each_others_decision(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    twins = tool_calls(
        ("command", {"command": "touch harmless"}),
        ("command", {"command": "touch pwned"}),
        ids=("same", "same"),
    )
    stub.script(twins, text("done"))
    editor.answers = ["Allow"]  # the harmless one; the dialog of the other is dismissed

    parked = await editor.run("go")

    assert parked["status"] == "awaiting_approval"
    assert (editor.workspace / "harmless").exists() and not (editor.workspace / "pwned").exists()
    assert [p["arguments"]["command"] for p in parked["pending"]] == ["touch pwned"]


async def test_a_decision_by_an_id_two_waiting_calls_share_is_refused(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    twins = tool_calls(
        ("command", {"command": "touch harmless"}),
        ("command", {"command": "touch pwned"}),
        ids=("same", "same"),
    )
    stub.script(twins, text("done"))

    parked = await editor.run("go")  # both dialogs dismissed: both wait

    assert len(parked["pending"]) == 2
    with pytest.raises(JsonRpcException, match="names 2 waiting calls"):
        await editor.command("tether.approve", {"session": parked["session"], "calls": ["same"]})
    assert (
        not (editor.workspace / "harmless").exists() and not (editor.workspace / "pwned").exists()
    )
