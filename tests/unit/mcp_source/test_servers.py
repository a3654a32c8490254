"""``McpServers.update``: one run of a name at a time, whatever the settings do."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

from tether.config import McpServerSettings, McpStdioServer
from tether.mcp_source.servers import McpServers
from tether.tools.toolbox import Toolbox


class Recorded(McpServers):
    """Each run of a server counted while it lasts; its end takes a while, as a process's
    exit does."""

    def __init__(self, servers: dict[str, McpServerSettings]) -> None:
        super().__init__(servers, Toolbox([]))
        self.live: Counter[str] = Counter()
        self.most: Counter[str] = Counter()
        self.runs: Counter[str] = Counter()

    def _serving(
        self, name: str, settings: McpServerSettings
    ) -> Callable[[asyncio.Event], Coroutine[Any, Any, None]]:
        async def body(stop: asyncio.Event) -> None:
            self.live[name] += 1
            self.runs[name] += 1
            self.most[name] = max(self.most[name], self.live[name])
            try:
                await stop.wait()
                await asyncio.sleep(0.1)
            finally:
                self.live[name] -= 1

        return body


async def test_a_server_removed_and_added_again_starts_once_its_old_run_has_ended() -> None:
    ed = McpStdioServer(command="ed-server")
    servers = Recorded({"ed": ed})
    servers.start()
    await asyncio.sleep(0.01)

    servers.update({})  # removed: its run stops, and takes a while to end
    servers.update({"ed": ed})  # added again at once
    await asyncio.sleep(0.3)

    assert servers.runs["ed"] == 2 and servers.live["ed"] == 1
    assert servers.most["ed"] == 1  # never two at once: two processes, one set of tools
    await servers.close()
    assert servers.live["ed"] == 0
