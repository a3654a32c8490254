"""One ``Service`` per workspace an ACP client names (a session's ``cwd``), each built by
the composition root with the ACP seams; one store for all (and for the LSP front: the
same settings give the same ``state_dir``). The index of each workspace a session is in is
built in the background, kept fresh by tether's own file watcher."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from pathlib import Path

from tether import app
from tether.acp.client_mcp import ClientServers
from tether.acp.files import AcpDocuments, AcpEditor
from tether.acp.link import Link
from tether.acp.person import AcpPerson
from tether.acp.updates import AcpUpdates
from tether.config import Configuration
from tether.errors import NotFound, Refused
from tether.index.progress import NoProgress
from tether.service import Service

log = logging.getLogger(__name__)


class Workspaces:
    def __init__(self, config: Configuration, link: Link) -> None:
        self.config = config
        self.link = link
        self.services: dict[Path, Service] = {}
        self.sessions: dict[str, Service] = {}  # sessions this client created or loaded
        self.people: dict[Path, AcpPerson] = {}  # each workspace's person seam
        self.background: set[asyncio.Task[None]] = set()
        self.client_servers = ClientServers()  # the MCP servers the client's sessions name
        self.indexed: set[Path] = set()  # the workspaces whose index is built and watched

    def at(self, cwd: str) -> Service:
        """The service of the workspace ``cwd`` names: an existing absolute directory."""
        path = Path(cwd)
        if "\0" in cwd or not path.is_absolute():
            raise Refused(f"cwd must be an absolute path, not {cwd[:200]!r}")
        try:
            workspace = path.resolve(strict=True)
        except (OSError, RuntimeError):
            raise Refused(f"cwd {cwd[:200]!r} is no directory tether can open") from None
        if not workspace.is_dir():
            raise Refused(f"cwd {cwd[:200]!r} is not a directory")
        if (service := self.services.get(workspace)) is None:
            service = self.services[workspace] = self._build(workspace)
        return service

    def _build(self, workspace: Path) -> Service:
        documents, person = AcpDocuments(self.link), AcpPerson(self.link)
        service = app.build(
            self.config, workspace, documents, person, AcpEditor(self.link, documents)
        )
        person.planned = service.planned_edit
        self.people[service.workspace] = person
        service.in_force.start_sources()  # in the background
        self._background(service.prune_checkpoints())
        log.info("tether serving %s over ACP", workspace)
        return service

    def _background(self, job: Coroutine[None, None, None]) -> None:
        task = asyncio.get_running_loop().create_task(job)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    def anywhere(self) -> Service:
        """A service to read the one store by: any workspace's, else the directory this
        process was started in."""
        return next(iter(self.services.values()), None) or self.at(str(Path.cwd()))

    def of(self, session: str) -> Service:
        if (service := self.sessions.get(session)) is None:
            raise NotFound(
                f"unknown session {session[:200]!r}: send session/load or session/resume first"
            )
        return service

    def joined(self, session: str, service: Service) -> AcpUpdates:
        """The session is this client's now: its updates sink. Its workspace's index is
        built and watched from the first (not for a directory only listed)."""
        self.sessions[session] = service
        if service.workspace not in self.indexed:
            self.indexed.add(service.workspace)
            self._background(_index(service))
        sink = self.link.sinks.get(session)
        if sink is None:
            sink = self.link.sinks[session] = AcpUpdates(self.link, session, service.workspace)
        return sink

    async def shutdown(self) -> None:
        """Every turn ends, each answering its calls, then every watch stops and every
        index and store closes, and the client's MCP servers stop."""
        for service in self.services.values():
            await service.shutdown()
        await self.client_servers.close()
        await asyncio.gather(*self.background, return_exceptions=True)


async def _index(service: Service) -> None:
    """Watch the workspace's files (ACP clients watch none for an agent), then build its
    index: searches use it once it is built, and ``index-symbols`` answers."""
    if not await service.in_force.watch_files():
        return  # no index (tools.index off), or the watch could not start (logged)
    await service.in_force.build_index(NoProgress())
    service.in_force.files_changed([], following=True)
    log.info("the index of %s is built", service.workspace)
