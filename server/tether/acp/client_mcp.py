"""The client's MCP servers: the ``mcpServers`` of ``session/new``, ``session/load`` and
``session/resume`` become MCP servers of the session's workspace.

The client is the person's editor, so its servers are the person's own choice: they start
at once, without the ``.mcp.json`` dialog, and untrusted (every tool of theirs asks, as
an untrusted ``mcp.servers`` entry's does). A stdio server runs in the workspace.

They are kept per workspace, not per session: the first session naming a server starts
it, its tools join the workspace's toolbox, and every session of that workspace in this
connection is offered them (tether's tool set is the workspace's: one toolbox shared by
the prompt, the specs, the dispatcher and parked calls; a per-session set would thread a
second one through each). A later session naming the same server again changes nothing.
They stop when the connection closes.

An entry tether cannot use is left with a logged reason, never failing the session: an
SSE server (deprecated by MCP; tether speaks stdio and streamable HTTP), a name MCP tool
names cannot hold, or a name the settings or ``.mcp.json`` already give a server.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer
from pydantic import ValidationError

from tether.config import McpServerSettings as ServerSettings
from tether.config import McpSettings
from tether.mcp_source.servers import McpServers
from tether.service import Service

log = logging.getLogger(__name__)
MAX_NAME = 100  # characters of a refused name that the log repeats


class Unusable(Exception):
    """Why one of the client's entries does not start."""


def converted(server: object, workspace: Path) -> tuple[str, ServerSettings]:
    """An ACP server entry as tether's settings of it: its name, and how to run it."""
    if isinstance(server, SseMcpServer):
        raise Unusable("SSE servers are not supported (tether speaks stdio and HTTP)")
    entry: dict[str, Any]
    if isinstance(server, McpServerStdio):
        env = {variable.name: variable.value for variable in server.env}
        entry = {"command": server.command, "args": server.args, "env": env}
        entry["cwd"] = str(workspace)
    elif isinstance(server, HttpMcpServer):
        entry = {"url": server.url, "headers": {h.name: h.value for h in server.headers}}
    else:
        raise Unusable(f"an entry of an unknown kind ({type(server).__name__})")
    try:
        checked = McpSettings.model_validate({"servers": {server.name: entry}})
    except ValidationError as exc:
        problems = "; ".join(str(e["msg"]) for e in exc.errors())
        raise Unusable(problems) from None
    return server.name, checked.servers[server.name]


class ClientServers:
    """Each workspace's servers the client named, run by one ``McpServers`` of its own
    that adds their tools to the workspace's toolbox."""

    def __init__(self) -> None:
        self.named: dict[Path, dict[str, ServerSettings]] = {}
        self.running: dict[Path, McpServers] = {}

    def add(self, service: Service, servers: list[Any] | None) -> None:
        """Start the servers a session names that its workspace does not run yet."""
        if not servers:
            return
        wanted = self.named.setdefault(service.workspace, {})
        added = False
        for server in servers:
            said = repr(str(getattr(server, "name", "?"))[:MAX_NAME])
            try:
                name, settings = converted(server, service.workspace)
            except Unusable as exc:
                log.warning("the client's MCP server %s is not started: %s", said, exc)
                continue
            if name in service.mcp.states:
                log.warning(
                    "the client's MCP server %s is not started: tether's settings or the "
                    "workspace's .mcp.json name a server so",
                    said,
                )
            elif name not in wanted:
                wanted[name], added = settings, True
            elif wanted[name] != settings:
                log.warning("the client's MCP server %s runs as it was first named", said)
        if not added:
            return
        if (running := self.running.get(service.workspace)) is None:
            running = McpServers({}, service.tools)
            running.start()
            self.running[service.workspace] = running
        running.update(wanted)  # those already running are left as they are

    async def close(self) -> None:
        for running in self.running.values():
            await running.close()
