"""MCP servers end to end: a real MCP server (``tests/support/mcp_server.py``) over stdio,
its tools offered to the model and run under the dispatcher's rules."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Editor, StartEditor
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
