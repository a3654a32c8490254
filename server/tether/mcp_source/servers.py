"""The configured MCP servers, each run by one task for the life of the language server.

A server starts in the background (a slow one never delays ``initialize``); once it has
listed its tools they join the toolbox, and the model is offered them from the next
request on. A server that fails to start, or ends, is logged and its tools leave the
toolbox. ``close`` ends every server (the ``mcp`` client ends a stdio server's process
tree). A server's stderr goes to tether's stderr, the log: never to stdout.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import AsyncIterator, Coroutine, Mapping
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import httpx2
import mcp.types as mt
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tether.config import McpHttpServer, McpStdioServer
from tether.errors import ToolError
from tether.mcp_source.tool import McpTool
from tether.mcp_source.workspace import Permits, WorkspaceServer
from tether.tools.toolbox import Toolbox

log = logging.getLogger(__name__)
ServerSettings = McpStdioServer | McpHttpServer
WAITING = "waits for the person to allow its .mcp.json entry"
CLOSE_S = 5.0  # how long shutdown waits for the servers to end before leaving them


class _Connection:
    """A running server, as its tools call it."""

    def __init__(self, name: str, session: ClientSession) -> None:
        self.name = name
        self.session = session

    async def call(self, tool: str, arguments: dict[str, Any]) -> mt.CallToolResult:
        try:
            return await self.session.call_tool(tool, arguments)
        except MCPError as exc:
            raise ToolError(f"MCP server {self.name!r}: {exc}") from None
        # The server went away before or during the call.
        except (OSError, EOFError, anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            raise ToolError(f"MCP server {self.name!r} is gone: {exc}") from None


class McpServers:
    """The servers of the settings, and those of the workspace's ``.mcp.json`` (``waiting``
    until the person allowed their entry: see ``workspace.py``). A name in both is the
    settings' server."""

    def __init__(
        self,
        servers: Mapping[str, ServerSettings],
        toolbox: Toolbox,
        workspace: Mapping[str, WorkspaceServer] | None = None,
        permits: Permits | None = None,
    ) -> None:
        self.servers = dict(servers)
        self.toolbox = toolbox
        self.permits = permits
        self.waiting = {
            name: server
            for name, server in (workspace or {}).items()
            if name not in self.servers and permits is not None
        }
        self.states: dict[str, str] = {name: "not started" for name in self.servers}
        self.states |= {name: WAITING for name in self.waiting}
        self._stopped = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []
        self._started = False
        self._asking: set[asyncio.Task[None]] = set()  # a dialog open: shutdown takes it back

    def start(self) -> None:
        """Start every server in the background (in a running event loop): those of the
        settings, and those of ``.mcp.json`` the person allowed before."""
        if self._started or self._stopped.is_set():
            return
        self._started = True
        for name, settings in self.servers.items():
            self._run(name, self._serve(name, settings))
        for name, server in list(self.waiting.items()):
            if self.permits is not None and self.permits.allowed(server):
                del self.waiting[name]
                self._run(name, self._serve(name, server.settings))

    def ask(self) -> None:
        """Ask the person about each ``.mcp.json`` server still waiting, in the background;
        one allowed starts at once."""
        if not self._started or self._stopped.is_set():
            return
        for name, server in list(self.waiting.items()):
            del self.waiting[name]
            task = self._run(name, self._asked(server), state="asking the person")
            self._asking.add(task)

    def _run(
        self, name: str, body: Coroutine[Any, Any, None], state: str = "starting"
    ) -> asyncio.Task[None]:
        self.states[name] = state
        task = asyncio.create_task(body)
        self._tasks.append(task)
        return task

    async def _asked(self, server: WorkspaceServer) -> None:
        assert self.permits is not None
        try:
            allowed = await self.permits.ask(server)
        except asyncio.CancelledError:
            self.states[server.name] = WAITING
            raise
        # The boundary of the person's editor: whatever it did, the server does not start.
        except Exception as exc:
            log.warning("could not ask about the MCP server %s: %s", server.name, exc)
            allowed = False
        if (task := asyncio.current_task()) is not None:
            self._asking.discard(task)
        if not allowed:
            self.states[server.name] = f"not allowed: {WAITING}"
            return
        self.states[server.name] = "starting"
        await self._serve(server.name, server.settings)

    async def close(self) -> None:
        self._stopped.set()
        for task in self._asking:
            task.cancel()
        if not self._tasks:
            return
        _, pending = await asyncio.wait(self._tasks, timeout=CLOSE_S)
        for task in pending:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _serve(self, name: str, settings: ServerSettings) -> None:
        added: list[str] = []
        try:
            async with _transport(settings) as (read, write), ClientSession(read, write) as s:
                await s.initialize()
                listed = await _tools(s)
                connection = _Connection(name, s)
                tools = [McpTool(name, settings, t, connection) for t in listed]
                tools = [t for t in tools if settings.offers(t.spec.name)]
                self.toolbox.add(tools)
                added = [t.name for t in tools]
                self.states[name] = f"running, {len(added)} tools"
                log.info("MCP server %s: %d tools", name, len(added))
                await self._stopped.wait()
            self.states[name] = "stopped"
        except asyncio.CancelledError:
            self.states[name] = "stopped"
            raise
        # The boundary of another program: whatever it did, it is logged, not raised.
        except Exception as exc:
            self.states[name] = f"failed: {_reason(exc)}"
            log.warning("MCP server %s failed: %s", name, _reason(exc))
        finally:
            self.toolbox.remove(added)


def _transport(settings: ServerSettings) -> AbstractAsyncContextManager[Any]:
    if isinstance(settings, McpStdioServer):
        params = StdioServerParameters(
            command=settings.command, args=settings.args, env=settings.env, cwd=settings.cwd
        )
        return stdio_client(params, errlog=sys.stderr)
    return _http(settings)


@asynccontextmanager
async def _http(settings: McpHttpServer) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(30.0, read=settings.timeout_s + 30.0)
    async with (
        httpx2.AsyncClient(headers=settings.headers, timeout=timeout) as client,
        streamable_http_client(settings.url, http_client=client) as streams,
    ):
        yield streams


async def _tools(session: ClientSession) -> list[mt.Tool]:
    listed = await session.list_tools()
    tools = list(listed.tools)
    while listed.next_cursor is not None:
        params = mt.PaginatedRequestParams(cursor=listed.next_cursor)
        listed = await session.list_tools(params=params)
        tools.extend(listed.tools)
    return tools


def _reason(exc: BaseException) -> str:
    """An exception group's first leaf, or the exception: what a person can act on."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
