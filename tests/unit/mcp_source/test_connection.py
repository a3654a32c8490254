"""A running server's side of a call: what each way of failing answers."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, INVALID_PARAMS

from tether.errors import ToolError
from tether.mcp_source.connection import Run


class Failing:
    """A session whose every call fails with ``error``."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    async def call_tool(self, tool: str, arguments: dict[str, Any]) -> Any:
        raise self.error


def run(error: Exception) -> Run:
    return Run("db", Failing(error), asyncio.Event(), None)  # type: ignore[arg-type]


async def test_a_servers_own_error_is_named_with_the_server() -> None:
    with pytest.raises(ToolError, match=r"^MCP server 'db': no such table$"):
        await run(MCPError(INVALID_PARAMS, "no such table")).call("q", {})


async def test_a_connection_that_closed_mid_call_says_the_server_ended() -> None:
    with pytest.raises(ToolError, match=r"'db' ended during the call; it is reached over HTTP"):
        await run(MCPError(CONNECTION_CLOSED, "Connection closed")).call("q", {})


async def test_an_http_server_that_cannot_be_reached_is_an_error_not_a_crash() -> None:
    with pytest.raises(ToolError, match=r"'db' could not be reached: refused"):
        await run(httpx2.ConnectError("refused")).call("q", {})
