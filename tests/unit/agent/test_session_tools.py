"""A session's own tools (an ACP client's MCP servers for it): offered to that session's
model and run in its turns only; in another session's a call of one is an unknown tool's."""

from __future__ import annotations

from pathlib import Path

from tests.support.doubles import EchoTool, ScriptedProvider, reply
from tests.unit.agent.harness import Harness


def own_tool() -> EchoTool:
    tool = EchoTool()
    tool.name = "mcp__ed__look"
    return tool


async def test_a_session_s_own_tool_is_told_and_run_in_that_session_only(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider(
        reply(("mcp__ed__look", {"value": "mine"})),
        reply(text="done"),
        reply(("mcp__ed__look", {"value": "theirs"})),
        reply(text="done"),
    )
    h = Harness(tmp_path, provider)
    mine, theirs = h.session(), h.session()
    h.service.tools.add([own_tool()], source="mcp:ed", session=mine)

    await h.run(session=mine)
    await h.run(session=theirs)

    told = [{spec.name for spec in request.tools} for request in provider.requests]
    assert "mcp__ed__look" in told[0] and "mcp__ed__look" in provider.requests[0].system
    assert "mcp__ed__look" not in told[2] and "mcp__ed__look" not in provider.requests[2].system
    assert h.answers(mine)[0][1:] == ("ok", "echo: mine")
    ((_, status, content),) = h.answers(theirs)
    assert status == "error" and content.startswith("unknown tool 'mcp__ed__look'")
    assert "mcp__ed__look" not in content.split(";", 1)[1]
    assert "mcp__ed__look" not in {t.name for t in h.service.in_force.listed()}
