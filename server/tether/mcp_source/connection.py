"""One run of one MCP server: its transport (a child over stdio, or an address), the
session over it, and the server's side of a call.

The session reads the server's messages through a watcher, so that the server's end (a crash,
an exit) is seen at once, with no call in flight; a call the end cuts off is answered with
an error naming the server and the last lines it wrote on stderr.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import mcp.types as mt
from anyio.abc import ObjectReceiveStream
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED

from tether.config import McpHttpServer, McpStdioServer
from tether.config import McpServerSettings as ServerSettings
from tether.errors import ToolError
from tether.mcp_source.stderr import StderrTail, said

Incoming = Any  # what a transport hands the session: SessionMessage | Exception
_GONE = (OSError, EOFError, anyio.ClosedResourceError, anyio.BrokenResourceError)


@dataclass
class Run:
    """A session with a running server; ``ended`` is set once the server's side ends."""

    name: str
    session: ClientSession
    ended: asyncio.Event
    stderr: StderrTail | None

    async def call(self, tool: str, arguments: dict[str, Any]) -> mt.CallToolResult:
        try:
            return await self.session.call_tool(tool, arguments)
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise ToolError(f"MCP server {self.name!r}: {exc}") from None
        except _GONE:
            pass
        except httpx2.HTTPError as exc:  # an HTTP server that did not answer
            raise ToolError(f"the MCP server {self.name!r} could not be reached: {exc}") from None
        raise ToolError(f"the MCP server {self.name!r} ended during the call; {await self.last()}")

    async def last(self) -> str:
        return await last_words(self.name, self.stderr)


async def last_words(name: str, stderr: StderrTail | None) -> str:
    """What a server said last on stderr, as an error tells it."""
    if stderr is None:
        return "it is reached over HTTP: its log is the server's own"
    return said(name, await stderr.tail())


@asynccontextmanager
async def opened(
    name: str, settings: ServerSettings, stderr: StderrTail | None
) -> AsyncIterator[Run]:
    """A session with the server, initialized, until the block ends (``stderr``: where a
    stdio server's stderr goes)."""
    try:
        async with _transport(settings, stderr) as (read, write):
            if stderr is not None:
                stderr.spawned()
            ended = asyncio.Event()
            watched: Any = _Watched(read, ended)  # the session reads it as the stream it is
            async with ClientSession(watched, write) as session:
                # Bounded: a server that never answers `initialize` is a server that failed.
                async with asyncio.timeout(max(settings.timeout_s, 30.0)):
                    await session.initialize()
                yield Run(name, session, ended, stderr)
    finally:
        if stderr is not None:
            stderr.spawned()  # a spawn that failed leaves our end open


class _Watched:
    """The transport's incoming stream, as the session reads it, which sets ``ended`` when
    the server's side ends (no task of its own: a message costs no extra hop)."""

    def __init__(self, stream: ObjectReceiveStream[Incoming], ended: asyncio.Event) -> None:
        self.stream = stream
        self.ended = ended

    async def receive(self) -> Incoming:
        try:
            return await self.stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self.ended.set()
            raise

    def __aiter__(self) -> _Watched:
        return self

    async def __anext__(self) -> Incoming:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self.stream.aclose()

    async def __aenter__(self) -> _Watched:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _transport(
    settings: ServerSettings, stderr: StderrTail | None
) -> AbstractAsyncContextManager[Any]:
    if isinstance(settings, McpStdioServer):
        assert stderr is not None
        params = StdioServerParameters(
            command=settings.command, args=settings.args, env=settings.env, cwd=settings.cwd
        )
        return stdio_client(params, errlog=stderr.file)
    return _http(settings)


@asynccontextmanager
async def _http(settings: McpHttpServer) -> AsyncIterator[Any]:
    timeout = httpx2.Timeout(30.0, read=settings.timeout_s + 30.0)
    async with (
        httpx2.AsyncClient(headers=settings.headers, timeout=timeout) as client,
        streamable_http_client(settings.url, http_client=client) as streams,
    ):
        yield streams


async def listed_tools(session: ClientSession) -> list[mt.Tool]:
    listed = await session.list_tools()
    tools = list(listed.tools)
    while listed.next_cursor is not None:
        params = mt.PaginatedRequestParams(cursor=listed.next_cursor)
        listed = await session.list_tools(params=params)
        tools.extend(listed.tools)
    return tools


def reason(exc: BaseException) -> str:
    """An exception group's first leaf, or the exception: what a person can act on."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return f"{type(exc).__name__}: {exc}"
