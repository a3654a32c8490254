"""The client's MCP servers end to end: a ``session/new`` naming the test MCP server
(``tests/support/mcp_server.py``, over stdio) makes its tools that session's own; they
ask, another session never sees them, ``session/load``/``resume`` name the session's
servers anew, and they stop when the client hangs up."""

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


async def with_ed(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, marks: Path
) -> tuple[Acp, str]:
    """A client, and a session whose own MCP server ``ed`` runs, its tools offered."""
    acp = await start_acp()
    ed = named_server("ed", marks)
    session = (await acp.conn.new_session(cwd=str(workspace), mcp_servers=[ed])).session_id
    await until_offered(acp, stub, session, "mcp__ed__look")
    return acp, session


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def test_a_client_server_s_tools_ask_run_and_stop_with_the_connection(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    acp, session = await with_ed(start_acp, stub, workspace, marks)
    acp.editor.answers = ["allow"]
    stub.script(tool_calls(("mcp__ed__look", {"what": "x"})), text("looked"))

    assert await acp.prompt(session, "look") == "end_turn"

    ((asked, options),) = acp.editor.asked  # untrusted: its read-only hint is not believed
    assert {"allow_once", "reject_once"} <= {o.kind for o in options}
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


def system(request: dict[str, Any]) -> str:
    """The system prompt, which lists the tools."""
    (prompt,) = [m["content"] for m in request["messages"] if m["role"] == "system"]
    return str(prompt)


def tool_answers(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def pids(marks: Path) -> set[int]:
    return {int(line.rsplit("pid=", 1)[1]) for line in marks.read_text().splitlines()}


async def test_each_session_is_offered_and_runs_only_its_own_servers(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    acp = await start_acp()
    ed_marks, other_marks = tmp_path / "ed", tmp_path / "other"
    ed = await acp.conn.new_session(cwd=str(workspace), mcp_servers=[named_server("ed", ed_marks)])
    other = await acp.conn.new_session(
        cwd=str(workspace), mcp_servers=[named_server("other", other_marks)]
    )
    plain = await acp.new()
    await until_offered(acp, stub, ed.session_id, "mcp__ed__look")
    assert not any(name.startswith("mcp__other__") for name in offered(stub.requests[-1]))
    assert "mcp__other__" not in system(stub.requests[-1])
    await until_offered(acp, stub, other.session_id, "mcp__other__look")
    assert not any(name.startswith("mcp__ed__") for name in offered(stub.requests[-1]))
    assert "mcp__ed__" not in system(stub.requests[-1])
    assert "mcp__other__look" in system(stub.requests[-1])
    stub.script(text("hello"))
    await acp.prompt(plain, "hi")
    assert not any(name.startswith("mcp__") for name in offered(stub.requests[-1]))
    assert "mcp__" not in system(stub.requests[-1])

    # Another session's tool is unknown here: answered so, never asked about, never run.
    stub.script(tool_calls(("mcp__ed__look", {"what": "theirs"})), text("no such tool"))
    await acp.prompt(other.session_id, "look with ed's")
    stub.script(tool_calls(("mcp__ed__look", {"what": "plain"})), text("no such tool"))
    await acp.prompt(plain, "look with ed's")

    (theirs,) = tool_answers(stub.requests[-3])
    (plains,) = tool_answers(stub.requests[-1])
    for answer in (theirs, plains):
        assert answer.startswith("unknown tool 'mcp__ed__look'"), answer
        assert "mcp__ed__" not in answer.split(";", 1)[1]  # the tools listed are its own
    assert "mcp__other__look" in theirs and "mcp__other__" not in plains
    assert not acp.editor.asked and not ed_marks.exists()


async def test_two_sessions_naming_one_server_name_each_run_their_own(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    acp = await start_acp()
    first_marks, second_marks = tmp_path / "first", tmp_path / "second"
    first = await acp.conn.new_session(
        cwd=str(workspace), mcp_servers=[named_server("ed", first_marks)]
    )
    second = await acp.conn.new_session(
        cwd=str(workspace), mcp_servers=[named_server("ed", second_marks)]
    )
    await until_offered(acp, stub, first.session_id, "mcp__ed__look")
    await until_offered(acp, stub, second.session_id, "mcp__ed__look")
    acp.editor.answers = ["allow", "allow"]
    stub.script(tool_calls(("mcp__ed__look", {"what": "1"})), text("one"))
    stub.script(tool_calls(("mcp__ed__look", {"what": "2"})), text("two"))

    await acp.prompt(first.session_id, "look")
    await acp.prompt(second.session_id, "look")

    assert "look 1 started" in first_marks.read_text()
    assert "look 2 started" in second_marks.read_text()
    assert "look 1" not in second_marks.read_text()
    assert len(pids(first_marks) | pids(second_marks)) == 2


async def test_a_parked_call_of_a_session_s_server_is_decided_in_its_next_prompt(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    marks = tmp_path / "marks"
    acp, session = await with_ed(start_acp, stub, workspace, marks)
    stub.script(tool_calls(("mcp__ed__look", {"what": "later"})))
    acp.editor.answers = [None]  # dismissed: the call parks
    await acp.prompt(session, "look")
    assert not marks.exists()
    stub.script(text("looked"), text("and this is the new prompt's answer"))

    acp.editor.answers = ["allow"]
    assert await acp.prompt(session, "go on") == "end_turn"

    assert len(acp.editor.asked) == 2 and "look later started" in marks.read_text()
    (answer,) = tool_answers(stub.requests[-2])
    assert answer.startswith("saw later")


async def test_unusable_entries_are_left_with_a_logged_reason(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    acp = await start_acp()
    marks = tmp_path / "marks"
    sse = SseMcpServer(type="sse", name="old", url="http://127.0.0.1:9/sse", headers=[])
    bad = named_server("no spaces allowed", marks)
    taken = named_server("taken", marks)  # .mcp.json's, waiting for the person's yes
    twice = named_server("ed", tmp_path / "twice")
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"taken": {"command": "x"}}}))
    first = await acp.conn.new_session(
        cwd=str(workspace), mcp_servers=[named_server("ed", marks), sse, bad, taken, twice]
    )
    await until_offered(acp, stub, first.session_id, "mcp__ed__look")
    left = ("mcp__old__", "mcp__no", "mcp__taken__")
    assert not any(name.startswith(left) for name in offered(stub.requests[-1]))
    acp.editor.answers = ["allow"]
    stub.script(tool_calls(("mcp__ed__look", {"what": "1"})), text("one"))
    await acp.prompt(first.session_id, "look")

    assert "look 1 started" in marks.read_text() and not (tmp_path / "twice").exists()
    log = (tmp_path / "acp-stderr.log").read_text()
    assert "'old' is not started: SSE servers are not supported" in log
    assert "'no spaces allowed' is not started: String should match pattern" in log
    assert "'taken' is not started: tether's settings or the workspace's .mcp.json" in log
    assert "'ed' is named twice: the first runs" in log


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


async def test_resume_names_the_session_s_servers_anew(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path, tmp_path: Path
) -> None:
    acp = await start_acp()
    ed_marks, kept_marks = tmp_path / "ed", tmp_path / "kept"
    kept = named_server("kept", kept_marks)
    session = (
        await acp.conn.new_session(
            cwd=str(workspace), mcp_servers=[named_server("ed", ed_marks), kept]
        )
    ).session_id
    await until_offered(acp, stub, session, "mcp__ed__look")
    await until_offered(acp, stub, session, "mcp__kept__look")
    acp.editor.answers = ["allow", "allow"]
    stub.script(
        tool_calls(("mcp__ed__look", {"what": "e"}), ("mcp__kept__look", {"what": "k"})),
        text("both"),
    )
    await acp.prompt(session, "look")
    (ed_pid,), (kept_pid,) = pids(ed_marks), pids(kept_marks)

    await acp.conn.resume_session(
        cwd=str(workspace), session_id=session, mcp_servers=[kept, named_server("new", ed_marks)]
    )

    await until_offered(acp, stub, session, "mcp__new__look")
    assert "mcp__ed__look" not in offered(stub.requests[-1])
    assert "mcp__kept__look" in offered(stub.requests[-1])
    async with asyncio.timeout(20):
        while alive(ed_pid):
            await asyncio.sleep(0.05)
    assert alive(kept_pid)  # named alike: it runs on
    await acp.conn.resume_session(cwd=str(workspace), session_id=session)  # names none
    await until_offered(acp, stub, session, "mcp__kept__look")  # left as they were

    await acp.conn.resume_session(cwd=str(workspace), session_id=session, mcp_servers=[])

    stub.script(text("none"))
    await acp.prompt(session, "tools?")
    assert not any(name.startswith("mcp__") for name in offered(stub.requests[-1]))
    async with asyncio.timeout(20):
        while alive(kept_pid):
            await asyncio.sleep(0.05)
