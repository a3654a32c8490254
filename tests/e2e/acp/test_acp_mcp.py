"""The client's MCP servers end to end: a ``session/new`` naming the test MCP server
(``tests/support/mcp_server.py``, over stdio) makes its tools the workspace's; they ask,
and the server stops when the client hangs up."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp.schema import EnvVariable, McpServerStdio, SseMcpServer

from tests.e2e.acp.conftest import Acp, StartAcp
from tests.support.provider_stub import ProviderStub, text, tool_calls

ROOT = Path(__file__).resolve().parents[3]


def named_server(name: str, marks: Path) -> McpServerStdio:
    """The test server as an ACP client names it: it runs in the workspace, so it finds
    its module through the environment the client gives it."""
    env = [
        EnvVariable(name="PYTHONPATH", value=str(ROOT)),
        EnvVariable(name="TETHER_MCP_MARKS", value=str(marks)),
    ]
    return McpServerStdio(
        name=name, command=sys.executable, args=["-m", "tests.support.mcp_server"], env=env
    )


def offered(request: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in request.get("tools", [])}


async def until_offered(acp: Acp, stub: ProviderStub, session: str, name: str) -> None:
    """Prompt until the model is offered ``name``: servers start in the background."""
    for _ in range(100):
        stub.script(text("ready"))
        await acp.prompt(session, "ready?")
        if name in offered(stub.requests[-1]):
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"never offered {name}: {offered(stub.requests[-1])}")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_client_server_s_tools_ask_run_and_stop_with_the_connection(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    acp = await start_acp()
    marks = tmp_path / "marks"
    session = (
        await acp.conn.new_session(cwd=str(workspace), mcp_servers=[named_server("ed", marks)])
    ).session_id
    await until_offered(acp, stub, session, "mcp__ed__look")
    acp.editor.answers = ["allow"]
    stub.script(tool_calls(("mcp__ed__look", {"what": "x"})), text("looked"))

    assert await acp.prompt(session, "look") == "end_turn"

    ((asked, options),) = acp.editor.asked  # untrusted: its read-only hint is not believed
    assert [o.kind for o in options] == ["allow_once", "allow_always", "reject_once"]
    assert asked.title is not None and "look" in asked.title
    (answer,) = [m for m in stub.requests[-1]["messages"] if m["role"] == "tool"]
    assert answer["content"].startswith("saw x")
    (pid,) = {int(line.rsplit("pid=", 1)[1]) for line in marks.read_text().splitlines()}
    assert alive(pid)

    assert acp.process.stdin is not None
    acp.process.stdin.close()  # the client hangs up
    async with asyncio.timeout(20):
        await acp.process.wait()
        while alive(pid):
            await asyncio.sleep(0.05)


async def test_a_server_runs_once_per_workspace_and_unusable_entries_are_left(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    acp = await start_acp()
    marks = tmp_path / "marks"
    sse = SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])
    bad = named_server("no spaces allowed", marks)
    taken = named_server("taken", marks)  # .mcp.json's, waiting for the person's yes
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"taken": {"command": "x"}}}))
    first = await acp.conn.new_session(
        cwd=str(workspace), mcp_servers=[named_server("ed", marks), sse, bad, taken]
    )
    await until_offered(acp, stub, first.session_id, "mcp__ed__look")
    left = ("mcp__old__", "mcp__no", "mcp__taken__")
    assert not any(name.startswith(left) for name in offered(stub.requests[-1]))

    # Another session naming it again is offered the same server, not a second one.
    second = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[named_server("ed", marks)])
    acp.editor.answers = ["allow", "allow"]
    stub.script(tool_calls(("mcp__ed__look", {"what": "1"})), text("one"))
    stub.script(tool_calls(("mcp__ed__look", {"what": "2"})), text("two"))
    await acp.prompt(first.session_id, "look")
    await acp.prompt(second.session_id, "look")

    pids = {line.rsplit("pid=", 1)[1] for line in marks.read_text().splitlines()}
    assert len(pids) == 1
    log = (tmp_path / "acp-stderr.log").read_text()
    assert "'old' is not started: SSE servers are not supported" in log
    assert "'no spaces allowed' is not started: String should match pattern" in log
    assert "'taken' is not started: tether's settings or the workspace's .mcp.json" in log


async def test_a_loaded_session_s_servers_start_too(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    acp = await start_acp()
    session = await acp.new()
    stub.script(text("hello"))
    await acp.prompt(session, "hi")
    assert not any(name.startswith("mcp__") for name in offered(stub.requests[-1]))
    later = await start_acp()  # another connection, as an editor reopened

    await later.conn.load_session(
        cwd=str(workspace), session_id=session, mcp_servers=[named_server("ed", tmp_path / "m")]
    )

    await until_offered(later, stub, session, "mcp__ed__look")
