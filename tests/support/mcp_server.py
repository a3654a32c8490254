"""A tiny MCP server for the tests, written with the ``mcp`` package's server side, run
over stdio: ``python -m tests.support.mcp_server``.

``look`` reads (``readOnlyHint``) and takes ``TETHER_MCP_LOOK_S`` seconds (0.5 by
default), so two looks at once show whether they overlap; ``slow`` sleeps as long as it
is told; ``broken`` answers an ``isError`` result; ``picture`` answers an image and
structured content; ``crash`` writes its last words on stderr and exits at once (it says
it reads, so it runs beside a ``look`` of a trusted server).

``TETHER_MCP_MARKS`` names a file where each tool call writes when it starts (with the
server's pid) and when it is cancelled (MCP's ``notifications/cancelled`` reached it);
``TETHER_MCP_FAIL_START`` makes the server write that text on stderr and exit before it
serves.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("tether-test")


def mark(what: str) -> None:
    if marks := os.environ.get("TETHER_MCP_MARKS"):
        with open(marks, "a", encoding="utf-8") as file:
            file.write(f"{what} pid={os.getpid()}\n")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def look(what: str) -> str:
    """Look at something, without changing it."""
    started = time.time()
    mark(f"look {what} started")
    await asyncio.sleep(float(os.environ.get("TETHER_MCP_LOOK_S", "0.5")))
    return f"saw {what} from {started:.6f} to {time.time():.6f}"


@server.tool()
async def slow(seconds: float) -> str:
    """Sleep, then say so."""
    mark(f"slow {seconds} started")
    try:
        await asyncio.sleep(seconds)
    except asyncio.CancelledError:
        mark(f"slow {seconds} cancelled")
        raise
    return f"slept {seconds}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
async def crash(last_words: str) -> str:
    """Say something on stderr, then exit at once."""
    await asyncio.sleep(0.2)  # a look started beside it is in flight by now
    print(last_words, file=sys.stderr, flush=True)
    os._exit(7)


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
    if failure := os.environ.get("TETHER_MCP_FAIL_START"):
        mark("failed to start")
        print(failure, file=sys.stderr, flush=True)
        sys.exit(3)
    server.run()
