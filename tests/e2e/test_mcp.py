"""MCP servers end to end: a real MCP server (``tests/support/mcp_server.py``) over stdio,
its tools offered to the model and run under the dispatcher's rules."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.e2e.conftest import Editor, StartEditor, close
from tests.support.provider_stub import ProviderStub, text, tool_calls

ROOT = Path(__file__).resolve().parents[2]


def server(**extra: Any) -> dict[str, Any]:
    test_server = [sys.executable, "-m", "tests.support.mcp_server"]
    return {"command": test_server[0], "args": test_server[1:], "cwd": str(ROOT), **extra}


OPTIONS = {
    "tether": {
        "mcp": {
            "servers": {
                "sure": server(trusted=True),
                "plain": server(timeout_s=1),
            }
        }
    }
}


def offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


async def until_offered(editor: Editor, stub: ProviderStub, names: set[str]) -> None:
    """Ask until the model is offered ``names``: servers start in the background."""
    for _ in range(100):
        stub.script(text("ready"))
        await editor.run("ready?")
        if names <= offered(stub.requests[-1]):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never offered {names}: {offered(stub.requests[-1])}")


def answers(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


async def statuses(editor: Editor, session: str) -> list[str]:
    history = (await editor.history(session))["messages"]
    return [m["status"] for m in history if m["role"] == "tool"]


async def test_a_trusted_servers_reads_run_together_unasked_and_answer_in_call_order(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options=OPTIONS)
    await until_offered(editor, stub, {"mcp__sure__look", "mcp__plain__look"})
    assert {"mcp__sure__slow", "mcp__sure__broken", "fs-read"} <= offered(stub.requests[-1])
    system = stub.requests[-1]["messages"][0]
    assert system["role"] == "system" and "`mcp__sure__look`" in system["content"]  # listed too

    stub.script(
        tool_calls(("mcp__sure__look", {"what": "first"}), ("mcp__sure__look", {"what": "b"})),
        text("seen"),
    )
    result = await editor.run("look twice")

    assert result["status"] == "done" and editor.dialogs == []
    first, second = answers(stub.requests[-1])
    assert first["content"].startswith("saw first") and second["content"].startswith("saw b")
    (a_from, a_to), (b_from, b_to) = (
        map(float, re.findall(r"\d+\.\d+", m["content"])) for m in (first, second)
    )
    assert a_from < b_to and b_from < a_to  # the two calls overlapped in time


async def test_tether_tools_lists_the_builtin_tools_and_each_servers_own(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options=OPTIONS)
    await until_offered(editor, stub, {"mcp__sure__look", "mcp__plain__look"})

    answer = await editor.command("tether.tools", {})
    listed = {t["name"]: t for t in answer["tools"]}

    assert listed["fs-read"]["source"] == "builtin" and listed["fs-read"]["read_only"]
    assert listed["command"]["read_only"] is False
    sure, plain = listed["mcp__sure__look"], listed["mcp__plain__look"]
    assert sure["source"] == "mcp:sure" and sure["read_only"]  # trusted, and it says it reads
    assert plain["source"] == "mcp:plain" and not plain["read_only"]  # untrusted: it asks
    assert sure["description"].startswith("Look at something")
    assert not listed["mcp__sure__slow"]["read_only"]
    servers = {s["name"]: s for s in answer["servers"]}  # each server's live state
    count = sum(name.startswith("mcp__sure__") for name in listed)
    assert servers["sure"] == {"name": "sure", "state": "running", "tools": count, "detail": ""}
    assert servers["plain"]["state"] == "running"


async def test_an_untrusted_servers_tools_ask_and_their_errors_are_errors(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options=OPTIONS)
    await until_offered(editor, stub, {"mcp__plain__look"})
    editor.answers = ["Allow", "Allow", "Allow"]
    stub.script(
        tool_calls(
            ("mcp__plain__look", {"what": "x"}),
            ("mcp__plain__broken", {"reason": "on purpose"}),
            ("mcp__plain__slow", {"seconds": 5}),
            ("mcp__plain__look", {"what": 3}),
        ),
        text("done"),
    )

    result = await editor.run("try them")

    assert len(editor.dialogs) == 3  # the invalid call is answered without asking
    assert "look" in editor.dialogs[0] and '"x"' in editor.dialogs[0]
    look, broken, slow, invalid = answers(stub.requests[-1])
    assert look["content"].startswith("saw x")
    assert "broken: on purpose" in broken["content"]
    assert "cancelled" in slow["content"]
    assert "is not of type 'string'" in invalid["content"]
    assert await statuses(editor, result["session"]) == ["ok", "error", "error", "error"]


async def dialog_shown(editor: Editor) -> str:
    for _ in range(100):
        if editor.dialogs:
            return editor.dialogs[-1]
        await asyncio.sleep(0.05)
    raise AssertionError("no dialog was shown")


async def test_a_workspace_mcp_json_server_starts_only_once_the_person_allowed_its_entry(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    mcp_json = workspace / ".mcp.json"
    mcp_json.write_text(json.dumps({"mcpServers": {"repo": server()}}))

    # Opened, the repository starts nothing: the person is asked, and dismisses.
    editor = await start_editor()
    asked = await dialog_shown(editor)
    assert "'repo'" in asked and "-m tests.support.mcp_server" in asked
    assert editor.dialog_actions[-1] == ["Allow", "Deny"]
    await asyncio.sleep(1.5)  # time enough for the server to list its tools, were it started
    stub.script(text("ready"))
    await editor.run("ready?")
    assert not any(name.startswith("mcp__repo__") for name in offered(stub.requests[-1]))
    await close(editor)

    # Allowed, it starts; allowed once, it starts without asking the next time.
    editor = await start_editor()
    editor.answers = ["Allow"]
    await until_offered(editor, stub, {"mcp__repo__look"})
    assert len(editor.dialogs) == 1
    await close(editor)
    editor = await start_editor()
    await until_offered(editor, stub, {"mcp__repo__look"})
    assert editor.dialogs == []
    await close(editor)

    # A changed entry is another entry: it asks again, and waits.
    mcp_json.write_text(json.dumps({"mcpServers": {"repo": server(timeout_s=5)}}))
    editor = await start_editor()
    editor.answers = ["Deny"]
    assert "'repo'" in await dialog_shown(editor)
    await asyncio.sleep(1.5)
    stub.script(text("ready"))
    await editor.run("ready?")
    assert not any(name.startswith("mcp__repo__") for name in offered(stub.requests[-1]))


async def test_changed_settings_start_stop_and_restart_servers(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()

    def change(servers: dict[str, Any]) -> None:
        settings = {"tether": {"mcp": {"servers": servers}}}
        editor.client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings=settings)
        )

    async def tools_and_servers() -> tuple[dict[str, Any], dict[str, Any]]:
        answer = await editor.command("tether.tools", {})
        tools = {t["name"]: t for t in answer["tools"]}
        return tools, {s["name"]: s for s in answer["servers"]}

    change({"a": server(), "b": server()})  # added: started
    await until_offered(editor, stub, {"mcp__a__look", "mcp__b__look"})
    tools, _ = await tools_and_servers()
    assert not tools["mcp__b__look"]["read_only"]

    change({"b": server(trusted=True)})  # a removed: stopped; b changed: restarted
    for _ in range(200):
        tools, servers = await tools_and_servers()
        if "mcp__b__look" in tools and tools["mcp__b__look"]["read_only"]:
            break
        await asyncio.sleep(0.05)
    assert tools["mcp__b__look"]["read_only"]  # the new trust: only a restart gives it
    assert not any(name.startswith("mcp__a__") for name in tools) and "a" not in servers
    stub.script(text("ready"))
    await editor.run("ready?")
    assert not any(name.startswith("mcp__a__") for name in offered(stub.requests[-1]))
