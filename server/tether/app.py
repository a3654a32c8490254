"""The composition root: every part of a server built once and wired into the service.

A front builds the service once (the LSP front at ``initialize``) with its own
implementations of the agent's seams: the open documents, the person, the editor.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tether.agent.approval import Gate, Nobody, Person
from tether.agent.dispatch import Dispatcher
from tether.agent.schedule import Scheduler
from tether.agent.turns import Turns
from tether.config import Configuration
from tether.index.location import database_path
from tether.index.workspace import WorkspaceIndex
from tether.mcp_source import McpServers
from tether.mcp_source.workspace import Permits, workspace_servers
from tether.providers import Providers
from tether.service import Service
from tether.store import Store
from tether.tools.base import Documents, Editor, Tool
from tether.tools.builtin import builtin_tools
from tether.tools.toolbox import Toolbox

log = logging.getLogger(__name__)


def build(
    config: Configuration,
    workspace: Path,
    documents: Documents,
    person: Person,
    editor: Editor,
    *,
    tools: Sequence[Tool[Any]] | None = None,
    providers: Providers | None = None,
    tell: Callable[[str], None] | None = None,
) -> Service:
    """The service, with the built-in tools and providers unless others are given
    (``tell``: says something to the person, once, such as an MCP server that failed)."""
    workspace = workspace.resolve()
    store = Store(config.pin_state_dir() / "sessions.sqlite3")
    box = Toolbox(builtin_tools() if tools is None else tools)
    listed, problems = workspace_servers(workspace)
    for problem in problems:
        log.warning("%s", problem)
    index = None
    if config.current.tools.index:
        index = WorkspaceIndex(workspace, database_path(config.pin_state_dir(), workspace))
    return Service(
        workspace=workspace,
        config=config,
        store=store,
        tools=box,
        # One dispatcher, so `tools.max_concurrency` bounds the server, not each turn.
        dispatcher=Dispatcher(box, store, lambda: config.current.tools.max_concurrency),
        turns=Turns(store),
        providers=Providers() if providers is None else providers,
        scheduler=Scheduler(store.tasks, str(workspace)),
        asking=Gate(store, person, workspace),
        quiet=Gate(store, Nobody(), workspace),
        documents=documents,
        editor=editor,
        mcp=McpServers(
            config.current.mcp.servers,
            box,
            workspace=listed,
            permits=Permits(store.rules, str(workspace), person),
            tell=tell,
        ),
        index=index,
    )
