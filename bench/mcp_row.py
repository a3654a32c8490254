"""Row: what tether adds to a call of an MCP server's tool over stdio, beyond the server's
own time (goal ≤ 2 ms): a call dispatched and stored like the model's, against the same
call made with the ``mcp`` client alone on a session of its own.

The server is the tests' (``tests/support/mcp_server.py``): its ``look`` returns at once
(``TETHER_MCP_LOOK_S=0``) and says when it ran, so its own time is taken off both sides.
"""

from __future__ import annotations

import asyncio
import re
import statistics
import sys
import time
from pathlib import Path

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.harness import Harness
from bench.timing import Row, interleaved, ratio, us
from tether.config import McpStdioServer
from tether.mcp_source import McpServers
from tether.mcp_source.tool import rendered
from tether.tools.toolbox import Toolbox

ROOT = Path(__file__).resolve().parents[1]
CALLS = 100  # calls per repetition
SETTINGS = McpStdioServer(
    command=sys.executable,
    args=["-m", "tests.support.mcp_server"],
    env={"TETHER_MCP_LOOK_S": "0"},
    cwd=str(ROOT),
    trusted=True,
)


def own_time(said: str) -> float:
    """The server's own time for one look, from what it answered (``from A to B``)."""
    start, end = map(float, re.findall(r"\d+\.\d+", said)[-2:])
    return end - start


async def row(workspace: Path, state: Path, reps: int) -> Row:
    box = Toolbox()
    servers = McpServers({"bench": SETTINGS}, box)
    servers.start()
    params = StdioServerParameters(
        command=SETTINGS.command, args=SETTINGS.args, env=SETTINGS.env, cwd=SETTINGS.cwd
    )
    try:
        async with asyncio.timeout(60):
            while "mcp__bench__look" not in box:
                await asyncio.sleep(0.05)
        h = Harness(workspace, state / "mcp", list(box.values()))
        own: list[float] = []  # the server's own time in each call (the same code both ways)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as bare:
            await bare.initialize()

            async def dispatched() -> float:
                took = 0.0
                for n in range(CALLS):
                    reply = h.store_reply([("mcp__bench__look", {"what": str(n)})])
                    start = time.perf_counter()
                    await h.dispatch(reply)
                    took += time.perf_counter() - start
                h.check_last(1)
                return took

            async def alone() -> float:
                took = 0.0
                for n in range(CALLS):
                    start = time.perf_counter()
                    said = rendered(await bare.call_tool("look", {"what": str(n)}))
                    took += time.perf_counter() - start
                    own.append(own_time(said))
                return took

            via, raw = await interleaved(dispatched, alone, reps)
        h.close()
    finally:
        await servers.close()
    server = statistics.median(own)
    tether, bare_call = via / CALLS - server, raw / CALLS - server
    note = (
        f"beyond the server's own {us(server)}; {CALLS} calls a repetition, each dispatched "
        "and stored alone; baseline: the `mcp` client alone on its own session"
    )
    return Row(
        "MCP tool call over stdio, per call (goal ≤ 2 ms)",
        us(tether),
        us(bare_call),
        ratio(tether, bare_call),
        note,
    )


def main() -> None:
    """``python -m bench.mcp_row``: this row alone."""
    import tempfile

    from bench.timing import table

    with tempfile.TemporaryDirectory(prefix="tether-bench-mcp-") as tmp:
        workspace = Path(tmp, "ws")
        workspace.mkdir()
        (Path(tmp) / "state").mkdir()
        print(table([asyncio.run(row(workspace.resolve(), Path(tmp, "state"), 7))]))


if __name__ == "__main__":
    main()
