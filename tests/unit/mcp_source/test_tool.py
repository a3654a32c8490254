"""An MCP server's tool as a tether tool: its name, its trust, its arguments, its results."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mcp.types as mt
import pytest
from pydantic import ValidationError

from tether.config import McpHttpServer, McpStdioServer, ToolsSettings
from tether.errors import ToolError
from tether.mcp_source.tool import McpTool, rendered
from tether.tools.base import NoDocuments, ToolContext
from tether.tools.toolbox import Toolbox

SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
    "required": ["query"],
}
CTX = ToolContext(Path("/ws"), NoDocuments(), ToolsSettings())


class Scripted:
    """A server's side of calls: answers ``result`` after ``delay_s``; records the calls."""

    def __init__(self, result: mt.CallToolResult | None = None, delay_s: float = 0.0) -> None:
        self.result = result or mt.CallToolResult(content=[mt.TextContent(type="text", text="ok")])
        self.delay_s = delay_s
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call(self, tool: str, arguments: dict[str, Any]) -> mt.CallToolResult:
        self.calls.append((tool, arguments))
        await asyncio.sleep(self.delay_s)
        return self.result


def wrapped(
    *,
    trusted: bool = False,
    read_only_hint: bool | None = None,
    connection: Scripted | None = None,
    timeout_s: float = 60.0,
) -> McpTool:
    hints = None if read_only_hint is None else mt.ToolAnnotations(read_only_hint=read_only_hint)
    spec = mt.Tool(name="search", description="Search.", input_schema=SCHEMA, annotations=hints)
    settings = McpStdioServer(command="srv", trusted=trusted, timeout_s=timeout_s)
    return McpTool("db", settings, spec, connection or Scripted())


def text(*parts: str) -> list[mt.ContentBlock]:
    return [mt.TextContent(type="text", text=p) for p in parts]


def test_a_tool_is_named_by_its_server_and_told_with_the_servers_own_schema() -> None:
    tool = wrapped()
    assert tool.name == "mcp__db__search"
    assert tool.params.model_json_schema() == {**SCHEMA}
    assert "Search." in tool.description and "'db'" in tool.description


@pytest.mark.parametrize(
    ("trusted", "hint", "read_only"),
    [(True, True, True), (False, True, False), (True, False, False), (True, None, False)],
)
def test_only_a_trusted_servers_read_only_hint_skips_the_dialog(
    trusted: bool, hint: bool | None, read_only: bool
) -> None:
    tool = wrapped(trusted=trusted, read_only_hint=hint)
    assert tool.read_only(tool.params.model_validate({"query": "q"}), CTX) is read_only


def test_arguments_are_checked_against_the_input_schema_and_passed_through() -> None:
    tool = wrapped()
    with pytest.raises(ValidationError, match="'query' is a required property"):
        tool.params.model_validate({"limit": 3})
    with pytest.raises(ValidationError, match="limit: 'x' is not of type 'integer'"):
        tool.params.model_validate({"query": "q", "limit": "x"})
    params = tool.params.model_validate({"query": "q", "extra": [1]})
    assert params.root == {"query": "q", "extra": [1]}


async def test_a_call_sends_the_tools_own_name_and_the_arguments() -> None:
    connection = Scripted(mt.CallToolResult(content=text("one", "two")))
    tool = wrapped(connection=connection)
    out = await tool.run(tool.params.model_validate({"query": "q"}), CTX)
    assert out == "one\ntwo"
    assert connection.calls == [("search", {"query": "q"})]


async def test_a_call_past_the_timeout_is_cancelled_and_answered_an_error() -> None:
    tool = wrapped(connection=Scripted(delay_s=5), timeout_s=0.05)
    with pytest.raises(ToolError, match=r"longer than 0\.05 s"):
        await tool.run(tool.params.model_validate({"query": "q"}), CTX)


async def test_allow_always_remembers_the_one_tool_and_the_dialog_shows_the_arguments() -> None:
    tool = wrapped()
    params = tool.params.model_validate({"query": "x" * 10_000})
    key = tool.rule_key(params, CTX)
    assert key is not None and key.key == "mcp__db__search srv"
    assert key.words == "every call of mcp__db__search (srv)"
    shown = await tool.preview(params, CTX, 1_000)
    assert not shown.whole and "'db'" in shown.text and "not shown" in shown.text
    assert (await tool.preview(tool.params.model_validate({"query": "q"}), CTX, 1_000)).whole


def test_a_rule_covers_the_tool_of_the_server_as_it_runs_not_another_of_its_name() -> None:
    """Two ACP sessions may each name an `ed` server that runs something else: a rule for
    one must not cover the other's, nor an entry whose command was changed."""
    spec = mt.Tool(name="look", input_schema=SCHEMA)
    one = McpTool("ed", McpStdioServer(command="ed", args=["--a"], cwd="/ws"), spec, Scripted())
    params = one.params.model_validate({"query": "q"})
    two = McpTool("ed", McpStdioServer(command="ed", args=["--b"]), spec, Scripted())
    web = McpTool("ed", McpHttpServer(url="https://x.example/mcp"), spec, Scripted())
    keys = [tool.rule_key(params, CTX) for tool in (one, two, web)]
    assert [key.key if key else None for key in keys] == [
        "mcp__ed__look ed --a in /ws",
        "mcp__ed__look ed --b",
        "mcp__ed__look https://x.example/mcp",
    ]


def test_images_and_binary_resources_are_named_not_inlined() -> None:
    blob = mt.BlobResourceContents(uri="file:///a.bin", blob="AAAA" * 100, mime_type="x/bin")
    result = mt.CallToolResult(
        content=[
            *text("caption"),
            mt.ImageContent(type="image", data="AAAA" * 1000, mime_type="image/png"),
            mt.EmbeddedResource(type="resource", resource=blob),
        ]
    )
    out = rendered(result)
    assert out.splitlines()[0] == "caption"
    assert "[image: image/png, 3,000 bytes, not shown]" in out
    assert "file:///a.bin: x/bin, 300 bytes, not shown" in out
    assert "AAAA" not in out


def test_structured_content_is_kept_as_json_text_once() -> None:
    alone = mt.CallToolResult(content=[], structured_content={"rows": [1, 2]})
    assert rendered(alone) == '{"rows": [1, 2]}'
    echoed = mt.CallToolResult(
        content=text('{"rows": [1, 2]}'), structured_content={"rows": [1, 2]}
    )
    assert rendered(echoed) == '{"rows": [1, 2]}'
    wrapped_value = mt.CallToolResult(content=text("hi"), structured_content={"result": "hi"})
    assert rendered(wrapped_value) == "hi"


def test_an_error_result_is_a_tool_error_with_its_text() -> None:
    with pytest.raises(ToolError, match="no such table"):
        rendered(mt.CallToolResult(content=text("no such table"), is_error=True))


def test_a_built_in_tool_keeps_its_name_and_every_change_is_counted() -> None:
    first, second = wrapped(), wrapped()
    box = Toolbox([first])
    box.add([second], source="mcp:db")
    assert box["mcp__db__search"] is first and box.version == 1
    box.remove("builtin")
    assert len(box) == 0 and box.version == 2
    box.remove("builtin")  # nothing left to remove: what the model is told stands
    assert box.version == 2


def test_a_tool_whose_input_schema_is_invalid_answers_each_call_with_why() -> None:
    spec = mt.Tool(name="odd", input_schema={"type": "object", "properties": {"a": {"type": 3}}})
    tool = McpTool("db", McpStdioServer(command="srv"), spec, Scripted())
    with pytest.raises(ValidationError, match="the server's input schema is invalid: 3 is not"):
        tool.params.model_validate({"a": 1})
