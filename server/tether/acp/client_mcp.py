"""The client's MCP servers: the ``mcpServers`` of ``session/new``, ``session/load`` and
``session/resume`` become MCP servers of that session.

The client is the person's editor, so its servers are the person's own choice: they start
at once, without the ``.mcp.json`` dialog, and untrusted (every tool of theirs asks, as
an untrusted ``mcp.servers`` entry's does). A stdio server runs in the workspace.

They are the session's, not the workspace's: their tools join the workspace's toolbox as
that session's own (``tools/toolbox.py``), so the session's prompt, the specs sent to the
provider, its dispatcher and its parked calls see them (each through ``Toolbox.view``),
and nothing else does: not another session of the workspace, not the LSP front and its
``tether.tools``. A call to one of them from another session is answered as any unknown
tool's. Each session runs its own servers (one ``McpServers`` per session): two sessions
naming a server of one name each run theirs, whatever command each gives.

Their tools are named as any MCP server's, ``mcp__SERVER__TOOL``: the model of a session
sees one server of a name, as a name the settings or ``.mcp.json`` give a server is
refused, and the toolbox keeps each session's own tools apart. A session's transcript
names the tools it called; loaded later with a server of that name, it is offered that
one's.

``session/load`` and ``session/resume`` name the session's servers anew: those no longer
named stop, those added start, those named with other settings restart, those named alike
run on (a ``session/resume`` without ``mcpServers`` leaves them be). They all stop when the
connection closes.

An entry tether cannot use is left with a logged reason, never failing the session: an
SSE server (deprecated by MCP; tether speaks stdio and streamable HTTP), a name MCP tool
names cannot hold, a name the settings or ``.mcp.json`` already give a server, or a name
the same request gave before.
"""

from __future__ import annotations

import asyncio
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
    """The servers the client named for each session, run by one ``McpServers`` per
    session that adds their tools to the workspace's toolbox as that session's own."""

    def __init__(self) -> None:
        self.running: dict[str, McpServers] = {}  # by session

    def name(self, service: Service, session: str, servers: list[Any] | None) -> None:
        """The servers ``session`` names now: those not running start, those no longer
        named stop, those named with other settings restart. None (a ``session/resume``
        that names none, as it may) leaves them as they are; ``[]`` stops them all."""
        if servers is None:
            return
        wanted: dict[str, ServerSettings] = {}
        for server in servers or ():
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
            elif name in wanted:
                log.warning("the client's MCP server %s is named twice: the first runs", said)
            else:
                wanted[name] = settings
        if (running := self.running.get(session)) is None:
            if not wanted:
                return
            running = McpServers({}, service.tools, session=session)
            running.start()
            self.running[session] = running
        running.update(wanted)  # those named alike run on

    async def close(self) -> None:
        await asyncio.gather(*(running.close() for running in self.running.values()))
