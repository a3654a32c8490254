"""The configured MCP servers, each run by one task for the life of the language server.

A server starts in the background (a slow one never delays ``initialize``); once it has
listed its tools they join the toolbox, and the model is offered them from the next
request on. A server that fails to start, or ends, is restarted once; its calls in flight
are answered with an error naming it and its last stderr lines (``connection.py``). If the
restart fails too, it stays ``failed`` and the person is told, once. ``close`` ends every
server (the ``mcp`` client ends a stdio server's process tree). A server's stderr goes to
tether's log (``stderr.py``): never to stdout.

Settings that change while serving (``update``) start the servers added, stop those
removed, and restart those changed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from typing import Any

from tether.config import McpServerSettings as ServerSettings
from tether.config import McpStdioServer
from tether.mcp_source.stderr import StderrTail
from tether.mcp_source.workspace import Permits, WorkspaceServer
from tether.models import McpState
from tether.tools.toolbox import Toolbox

log = logging.getLogger(__name__)
WAITING = "waits for the person to allow its .mcp.json entry"
CLOSE_S = 5.0  # how long shutdown waits for the servers to end before leaving them
RESTART_S = 0.2  # a pause before the one restart: a crash loop never spins
SETTLING: tuple[McpState, ...] = ("not started", "starting", "restarting")
_Body = Callable[[asyncio.Event], Coroutine[Any, Any, None]]


@dataclass
class ServerState:
    """Where one server is: its tools in force, and why it failed or what it waits for."""

    state: McpState = "not started"
    tools: int = 0
    detail: str = ""

    def __str__(self) -> str:
        said = f"{self.state}, {self.tools} tools" if self.state == "running" else self.state
        return f"{said}: {self.detail}" if self.detail else said


@dataclass
class _Task:
    """One run of a name: asking the person, or serving; ``stop`` ends it."""

    stop: asyncio.Event = field(default_factory=asyncio.Event)
    task: asyncio.Task[None] | None = None


class McpServers:
    """The servers of the settings, and those of the workspace's ``.mcp.json`` (``waiting``
    until the person allowed their entry: see ``workspace.py``). A name in both is the
    settings' server. ``tell`` says something to the person (a server that failed).
    ``session``: the servers are that session's own, their tools in its view only."""

    def __init__(
        self,
        servers: Mapping[str, ServerSettings],
        toolbox: Toolbox,
        workspace: Mapping[str, WorkspaceServer] | None = None,
        permits: Permits | None = None,
        tell: Callable[[str], None] | None = None,
        session: str | None = None,
    ) -> None:
        self.servers = dict(servers)
        self.toolbox = toolbox
        self.session = session  # whose tools they are: one session's, or (None) every one's
        self.permits = permits
        self.tell = tell
        self.waiting = {
            name: server
            for name, server in (workspace or {}).items()
            if name not in self.servers and permits is not None
        }
        self.states = {name: ServerState() for name in self.servers}
        self.states |= {name: ServerState("waiting", detail=WAITING) for name in self.waiting}
        self._stopped = False
        self._runs: dict[str, _Task] = {}
        self._leaving: dict[str, _Task] = {}  # runs of servers removed from the settings
        self._started = False
        self._told: set[str] = set()
        self._changed = asyncio.Event()  # set whenever a server's state changes

    def start(self) -> None:
        """Start every server in the background (in a running event loop): those of the
        settings, and those of ``.mcp.json`` the person allowed before."""
        if self._started or self._stopped:
            return
        self._started = True
        for name, settings in self.servers.items():
            self._run(name, self._serving(name, settings))
        for name, server in list(self.waiting.items()):
            if self.permits is not None and self.permits.allowed(server):
                del self.waiting[name]
                self._run(name, self._serving(name, server.settings))

    def ask(self) -> None:
        """Ask the person about each ``.mcp.json`` server still waiting, in the background;
        one allowed starts at once."""
        if not self._started or self._stopped:
            return
        for name, server in list(self.waiting.items()):
            del self.waiting[name]
            self._run(name, self._asking(server), "asking")

    def update(self, servers: Mapping[str, ServerSettings]) -> None:
        """The settings changed: start the servers added, stop those removed, restart those
        changed (each after its old run has ended)."""
        old, self.servers = self.servers, dict(servers)
        if not self._started or self._stopped:
            self.states = {n: s for n, s in self.states.items() if n not in old} | {
                name: ServerState() for name in self.servers
            }
            return
        self._leaving = {n: r for n, r in self._leaving.items() if r.task and not r.task.done()}
        for name in old:
            if name not in self.servers and (run := self._runs.pop(name, None)) is not None:
                run.stop.set()
                self._leaving[name] = run
                self.states.pop(name, None)
        for name, settings in self.servers.items():
            if old.get(name) != settings:
                self._stop(name)  # a .mcp.json server of that name gives way
                self._told.discard(name)
                self._run(name, self._serving(name, settings))

    async def settled(self) -> None:
        """Wait until no server is starting or restarting: each runs, failed or stopped
        (``tether doctor`` starts them for a moment)."""
        while any(state.state in SETTLING for state in self.states.values()):
            self._changed.clear()
            await self._changed.wait()

    def _serving(self, name: str, settings: ServerSettings) -> _Body:
        return lambda stop: self._serve(name, settings, stop)

    def _asking(self, server: WorkspaceServer) -> _Body:
        return lambda stop: self._asked(server, stop)

    def _stop(self, name: str) -> None:
        if (run := self._runs.get(name)) is not None:
            run.stop.set()

    def _set(self, name: str, stop: asyncio.Event, state: ServerState) -> None:
        """Say where a server is, if this run is still the name's (a run replaced by a
        restart, or stopped as its server left the settings, says no more)."""
        if (run := self._runs.get(name)) is not None and run.stop is stop:
            self.states[name] = state
            self._changed.set()

    def _run(self, name: str, body: _Body, state: McpState = "starting") -> None:
        self.states[name] = ServerState(state)
        self._changed.set()
        # The name's last run, still serving or leaving: a name removed from the settings
        # and added again starts once its old process has ended.
        before = self._runs.get(name) or self._leaving.pop(name, None)
        run = self._runs[name] = _Task()

        async def after_the_last() -> None:
            if before is not None and before.task is not None:
                # One run of a name at a time: its tools, its process.
                with contextlib.suppress(BaseException):
                    await asyncio.shield(before.task)
            await body(run.stop)

        run.task = asyncio.create_task(after_the_last())

    async def _asked(self, server: WorkspaceServer, stop: asyncio.Event) -> None:
        assert self.permits is not None
        try:
            allowed = await self.permits.ask(server)
        except asyncio.CancelledError:
            self._set(server.name, stop, ServerState("waiting", detail=WAITING))
            raise
        # The boundary of the person's editor: whatever it did, the server does not start.
        except Exception as exc:
            log.warning("could not ask about the MCP server %s: %s", server.name, exc)
            allowed = False
        if not allowed:
            self._set(server.name, stop, ServerState("not allowed", detail=WAITING))
            return
        self._set(server.name, stop, ServerState("starting"))
        await self._serve(server.name, server.settings, stop)

    async def close(self) -> None:
        self._stopped = True
        every = [*self._runs.values(), *self._leaving.values()]
        runs = [run.task for run in every if run.task is not None]
        for name, run in self._runs.items():
            run.stop.set()
            if run.task is not None and self.states.get(name, ServerState()).state == "asking":
                run.task.cancel()  # a dialog open: shutdown takes it back
        if not runs:
            return
        _, pending = await asyncio.wait(runs, timeout=CLOSE_S)
        for task in pending:
            task.cancel()
        await asyncio.gather(*runs, return_exceptions=True)

    async def _serve(self, name: str, settings: ServerSettings, stop: asyncio.Event) -> None:
        """Run the server until stopped; restart it once if it fails or ends."""
        fault: str | None = ""
        for attempt in (1, 2):
            if not stop.is_set():
                fault = await self._session(name, settings, stop)
            if fault is None or stop.is_set():
                self._set(name, stop, ServerState("stopped"))
                return
            if attempt == 1:
                log.warning("MCP server %s, restarting it once: %s", name, fault)
                self._set(name, stop, ServerState("restarting", detail=fault))
                await asyncio.sleep(RESTART_S)
        assert fault is not None
        self._set(name, stop, ServerState("failed", detail=fault))
        log.warning("MCP server %s failed: %s", name, fault)
        if self.tell is not None and name not in self._told:
            self._told.add(name)
            self.tell(
                f"tether: the MCP server {name!r} failed and was not restarted again; its "
                f"tools are not offered. Why: {fault}"
            )

    async def _session(
        self, name: str, settings: ServerSettings, stop: asyncio.Event
    ) -> str | None:
        """One run of the server: None when it was stopped, else what went wrong."""
        # The mcp library takes about as long to import as all of pygls: only a server that
        # starts pays for it, never tether's start-up.
        from tether.mcp_source.connection import last_words, listed_tools, opened, reason
        from tether.mcp_source.tool import McpTool

        added = False
        source = f"mcp:{name}"
        stderr = StderrTail(name) if isinstance(settings, McpStdioServer) else None
        try:
            async with opened(name, settings, stderr) as run:
                listed = await listed_tools(run.session)
                tools = [McpTool(name, settings, t, run) for t in listed]
                tools = [t for t in tools if settings.offers(t.spec.name)]
                self.toolbox.add(tools, source, self.session)
                added = True
                self._set(name, stop, ServerState("running", tools=len(tools)))
                log.info("MCP server %s: %d tools", name, len(tools))
                await _first(stop, run.ended)
                # At once, before the server is ended: no new call goes to it.
                self.toolbox.remove(source, self.session)
                added = False
                if stop.is_set():
                    return None
                return f"it ended; {await run.last()}"
        except asyncio.CancelledError:
            raise
        # The boundary of another program: whatever it did, it is reported, not raised.
        except Exception as exc:
            said = "it failed" if added else "it could not start"
            told = await last_words(name, stderr)
            return f"{said} ({reason(exc)}); {told}"
        finally:
            if added:
                self.toolbox.remove(source, self.session)


async def _first(*events: asyncio.Event) -> None:
    waits = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for wait in waits:
            wait.cancel()
