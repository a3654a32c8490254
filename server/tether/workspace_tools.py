"""The tools in force in one workspace, and what keeps them: the toolbox (built in, the
MCP servers' as they come and go), the sandbox commands run in, the workspace index and
the watch that keeps it fresh, and what the model is told of the tools.

The service holds one (``Service.in_force``); the fronts start its sources and its index
after ``initialize`` (LSP) or when a session joins its workspace (ACP).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from tether.agent.prompt import system_prompt
from tether.config import Configuration
from tether.index.progress import Progress
from tether.index.workspace import WorkspaceIndex
from tether.mcp_source import McpServers
from tether.providers.base import ToolSpec
from tether.tools.base import Documents, Editor, ToolContext, reads
from tether.tools.index_view import NoIndex
from tether.tools.sandbox import Sandbox, check
from tether.tools.toolbox import Toolbox

if TYPE_CHECKING:
    from tether.index.watching import Watcher

log = logging.getLogger(__name__)
Told = tuple[str, list[ToolSpec]]  # the system prompt and the tools' specs


@dataclass(frozen=True)
class Listed:
    """One tool in force, as ``tether.tools`` lists it."""

    name: str
    source: str  # "builtin", or "mcp:NAME"
    reads: bool
    description: str


class WorkspaceTools:
    def __init__(
        self,
        workspace: Path,
        config: Configuration,
        tools: Toolbox,
        documents: Documents,
        editor: Editor,
        mcp: McpServers,
        index: WorkspaceIndex | None,
    ) -> None:
        self.workspace = workspace
        self.config = config
        self.tools = tools
        self.documents = documents
        self.editor = editor
        self.mcp = mcp
        self.index = index  # None: searches run ripgrep over everything (tools.index off)
        self._watcher: Watcher | None = None  # tether's own watch of the files, if any
        self._sandbox: Sandbox | None = None
        # What the model is told of the tools, by the view's owner, for the toolbox's version.
        self._told: tuple[int, dict[str | None, Told]] = (-1, {})

    def context(self) -> ToolContext:
        """What a tool's call runs with, by the settings as they are now."""
        settings = self.config.current
        key = settings.provider.api_key
        secrets = (key.get_secret_value(),) if key else ()
        sandbox = replace(self.sandbox(), unasked=settings.approval.commands == "sandboxed")
        index = self.index if self.index is not None else NoIndex()
        return ToolContext(
            self.workspace,
            self.documents,
            settings.tools,
            self.editor,
            secrets,
            sandbox=sandbox,
            index=index,
        )

    def sandbox(self) -> Sandbox:
        """The sandbox for commands, checked by its probe once per sandbox settings; where
        it is not there, the person is told why (and every command asks)."""
        wanted = self.config.current.sandbox
        if self._sandbox is None or self._sandbox.settings != wanted:
            self._sandbox = check(wanted)
            if not self._sandbox.used and wanted.mode != "off":
                log.warning("commands run without a sandbox: %s", self._sandbox.cause)
        return self._sandbox

    def told(self, session: str | None) -> Told:
        """What the model is told of the tools a session has (its view of the toolbox: an
        ACP client's servers for it are its own): the system prompt, which lists them, and
        their specs. Built once per set of tools (schema generation costs ~15 ms); an MCP
        server's tools join when the server has listed them."""
        tools = self.tools.view(session)
        if self._told[0] != tools.version:
            self._told = (tools.version, {})
        cache = self._told[1]
        if (told := cache.get(tools.owner)) is None:
            specs = [
                ToolSpec(
                    name=t.name, description=t.description, parameters=t.params.model_json_schema()
                )
                for t in tools.values()
            ]
            told = cache[tools.owner] = (system_prompt(self.workspace, list(tools.values())), specs)
        return told

    def listed(self) -> list[Listed]:
        """Every tool in force, where it comes from, and whether its calls only read."""
        return [
            Listed(
                name=tool.name,
                source=self.tools.source(tool.name),
                reads=reads(tool),
                description=tool.description,
            )
            for tool in self.tools.values()
        ]

    # -- MCP servers ----------------------------------------------------------------------

    def start_sources(self) -> None:
        """Start the MCP servers in the background; their tools join as they list them."""
        self.mcp.start()

    def reconfigure_sources(self) -> None:
        """The settings changed: MCP servers added start, removed stop, changed restart."""
        self.mcp.update(self.config.current.mcp.servers)

    def ask_for_sources(self) -> None:
        """Ask the person about each server of the workspace's ``.mcp.json`` they have not
        allowed yet (in the background): only then may it start."""
        self.mcp.ask()

    # -- the index ------------------------------------------------------------------------

    async def build_index(self, progress: Progress) -> None:
        """Build the workspace index, or bring it up to date (in the background)."""
        if self.index is not None:
            await self.index.build(progress)

    async def watch_files(self) -> bool:
        """Watch the workspace's files with tether's own watcher (where the editor watches
        none for tether); False when there is no index or the watch cannot start."""
        if self.index is None or self.index.closing:
            return False  # (shut down before the watch began: nothing would stop it)
        from tether.index.watching import Watcher  # watchfiles: only where it is used

        self._watcher = Watcher(self.index)
        return await self._watcher.start()

    def files_changed(self, paths: Iterable[Path], following: bool = False) -> None:
        """Files created, changed or deleted (``following``: a watcher, the editor's or
        tether's, tells every change from now on, so the index may answer searches)."""
        if self.index is not None:
            self.index.changed(paths)
            if following:
                self.index.follow()

    async def close(self) -> None:
        """Stop the watch, close the index, stop the MCP servers."""
        if self._watcher is not None:
            await self._watcher.stop()
        if self.index is not None:
            await self.index.close()
        await self.mcp.close()
