"""An ACP client's MCP server entries as tether's settings of them."""

from __future__ import annotations

from pathlib import Path

import pytest
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio, SseMcpServer

from tether.acp.client_mcp import Unusable, converted
from tether.config import McpHttpServer, McpStdioServer


def test_a_stdio_entry_runs_in_the_workspace_with_its_environment(tmp_path: Path) -> None:
    env = [EnvVariable(name="A", value="1"), EnvVariable(name="B", value="two")]
    entry = McpServerStdio(name="ed", command="run-it", args=["-x"], env=env)

    name, settings = converted(entry, tmp_path)

    assert name == "ed"
    assert settings == McpStdioServer(
        command="run-it", args=["-x"], env={"A": "1", "B": "two"}, cwd=str(tmp_path)
    )
    assert not settings.trusted  # every tool of a client's server asks


def test_an_http_entry_keeps_its_headers(tmp_path: Path) -> None:
    headers = [HttpHeader(name="Authorization", value="Bearer t")]
    entry = HttpMcpServer(type="http", name="web", url="https://x.test/mcp", headers=headers)

    assert converted(entry, tmp_path) == (
        "web",
        McpHttpServer(url="https://x.test/mcp", headers={"Authorization": "Bearer t"}),
    )


@pytest.mark.parametrize(
    ("entry", "why"),
    [
        (SseMcpServer(type="sse", name="s", url="https://x.test/sse", headers=[]), "SSE"),
        (McpServerStdio(name="a b", command="x", args=[], env=[]), "should match pattern"),
        (McpServerStdio(name="ed", command="", args=[], env=[]), "at least 1 character"),
        (object(), r"unknown kind \(object\)"),
    ],
)
def test_unusable_entries_say_why(entry: object, why: str, tmp_path: Path) -> None:
    with pytest.raises(Unusable, match=why):
        converted(entry, tmp_path)
