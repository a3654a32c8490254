"""A tiny MCP server for the tests, written with the ``mcp`` package's server side, run
over stdio: ``python -m tests.support.mcp_server``.

``look`` reads (``readOnlyHint``) and takes ``TETHER_MCP_LOOK_S`` seconds (0.5 by
default), so two looks at once show whether they overlap; ``slow`` sleeps as long as it
is told; ``broken`` answers an ``isError`` result; ``picture`` answers an image and
structured content.
"""

from __future__ import annotations

import asyncio
import os
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("tether-test")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def look(what: str) -> str:
    """Look at something, without changing it."""
    started = time.time()
    await asyncio.sleep(float(os.environ.get("TETHER_MCP_LOOK_S", "0.5")))
    return f"saw {what} from {started:.3f} to {time.time():.3f}"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then say so."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
def broken(reason: str) -> str:
    """Always fails, with the reason given."""
    raise ToolError(f"broken: {reason}")


@server.tool()
def picture() -> list[TextContent | ImageContent]:
    """A caption and an image."""
    return [
        TextContent(type="text", text="a red dot"),
        ImageContent(type="image", data="iVBORw0KGgo=", mime_type="image/png"),
    ]


if __name__ == "__main__":
    server.run()
