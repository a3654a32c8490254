"""What the service is built with, and its commands that start, resume or cancel a turn:
``open`` and ``name`` a session, ``run`` a prompt, decide on a parked reply (``approve``,
``deny``, ``applied``), ``cancel``.

The base of ``Service`` (``__init__.py``), apart from the commands that only read or manage
what turns leave behind: a turn is claimed and its ``Agent`` built here, nowhere else.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from tether.agent.approval import Gate
from tether.agent.compaction import Compactor
from tether.agent.dispatch import Dispatcher
from tether.agent.env import TurnEnv
from tether.agent.events import Updates, ended
from tether.agent.loop import Agent
from tether.agent.parked import ParkedReply
from tether.agent.schedule import Scheduler
from tether.agent.turns import Turns
from tether.checkpoints.record import Checkpoints
from tether.config import Configuration
from tether.errors import ConfigError, NothingWaiting, Refused
from tether.index.workspace import WorkspaceIndex
from tether.mcp_source import McpServers
from tether.models import PARKED, RecordedChoice, Scope, SessionInfo, TurnResult
from tether.providers import Providers
from tether.store import Store
from tether.tools.base import Documents, Editor, EditsFiles, Tool
from tether.tools.toolbox import Toolbox, toolbox
from tether.workspace_tools import WorkspaceTools

Body = Callable[[Agent], Awaitable[TurnResult]]


class TurnCommands:
    """The service's parts, and the commands that start, resume or cancel a turn."""

    def __init__(
        self,
        *,
        workspace: Path,
        config: Configuration,
        store: Store,
        tools: Sequence[Tool[Any]] | Toolbox,
        dispatcher: Dispatcher,
        turns: Turns,
        providers: Providers,
        scheduler: Scheduler,
        asking: Gate,
        quiet: Gate,
        documents: Documents,
        editor: Editor,
        mcp: McpServers | None = None,
        index: WorkspaceIndex | None = None,
    ) -> None:
        self.workspace = workspace
        self.config = config
        self.store = store
        self.dispatcher = dispatcher
        self.turns = turns
        self.providers = providers
        self.scheduler = scheduler
        self.asking = asking
        self.quiet = quiet  # scheduled turns never pop a dialog: their calls park
        self.documents = documents
        self.editor = editor
        box = toolbox(tools)
        mcp = McpServers({}, box) if mcp is None else mcp
        self.in_force = WorkspaceTools(workspace, config, box, documents, editor, mcp, index)
        self.checkpoints = Checkpoints(
            store, workspace, documents, lambda: self.config.current.checkpoint
        )

    @property
    def tools(self) -> Toolbox:
        return self.in_force.tools

    @property
    def mcp(self) -> McpServers:
        return self.in_force.mcp

    @property
    def index(self) -> WorkspaceIndex | None:
        return self.in_force.index

    # -- turns -------------------------------------------------------------------------

    def open(self, prompt: str, session: str | None) -> str:
        """The session a prompt goes to: a new one, or an existing one made whole."""
        if session is None:
            return self.store.sessions.create(self.workspace, prompt)
        return self.turns.open(session).id

    def name(self, session: str, prompt: str) -> None:
        """A session made before its first prompt (ACP's ``session/new``) is titled by it."""
        self.store.sessions.retitle(session, prompt)

    async def run(
        self, session: str, prompt: str, updates: Updates, ask: bool = True
    ) -> TurnResult:
        seen = self.store.sessions.get(session)
        parked = self._parked(seen)  # loaded before the turn's claim changes the status

        async def body(agent: Agent) -> TurnResult:
            if parked is not None:
                parked.settle("the person sent a new message instead", updates)
            return await agent.run_turn(prompt)

        return await self._turn(seen, updates, body, ask)

    async def approve(
        self, session: str, calls: list[str] | None, remember: Scope | None, updates: Updates
    ) -> TurnResult:
        seen, parked = self._waiting(session)
        parked.chosen(calls)  # an unknown call is refused before anything is claimed

        def decide() -> None:
            for waiting in parked.decide(calls, RecordedChoice(decision="allow")):
                if remember and waiting.rule_key:
                    self.asking.remember(remember, session, waiting.pending.tool, waiting.rule_key)

        return await self._resume(seen, parked, updates, decide)

    async def deny(
        self,
        session: str,
        calls: list[str] | None,
        reason: str | None,
        updates: Updates,
        remember: Scope | None = None,  # ACP's reject_always: a rule that denies
    ) -> TurnResult:
        seen, parked = self._waiting(session)
        parked.chosen(calls)
        choice = RecordedChoice(decision="deny", reason=reason or None)

        def decide() -> None:
            for waiting in parked.decide(calls, choice):
                if remember and waiting.rule_key:
                    tool, key = waiting.pending.tool, waiting.rule_key
                    self.asking.remember(remember, session, tool, key, "deny")

        return await self._resume(seen, parked, updates, decide)

    async def applied(self, session: str, call: str, updates: Updates) -> TurnResult:
        """The person applied a waiting patch in the editor themselves: record it, run on."""
        seen, parked = self._waiting(session)
        for waiting in parked.chosen([call]):
            if not isinstance(waiting.call.tool, EditsFiles):
                raise Refused(f"call {call} is a {waiting.pending.tool}, not a file edit")
        choice = RecordedChoice(decision="applied")
        return await self._resume(seen, parked, updates, lambda: parked.decide([call], choice))

    def cancel(self, session: str, updates: Updates) -> bool:
        """Cancel the running turn, or give up on a parked one: either way it ends
        `cancelled`, every call answered."""
        if self.turns.cancel(session):
            return True
        seen = self.store.sessions.get(session)
        parked = self._parked(seen)
        if parked is None or not self.store.sessions.claim(seen, "cancelled"):
            return False
        parked.settle("the person cancelled the turn", updates)
        updates.send(ended(TurnResult(session=session, status="cancelled")))
        return True

    async def _resume(
        self, seen: SessionInfo, parked: ParkedReply, updates: Updates, decide: Callable[[], Any]
    ) -> TurnResult:
        """Resume a parked reply with a decision, recorded once this process holds the
        session: two windows deciding at once never write over the one that runs."""

        async def body(agent: Agent) -> TurnResult:
            decide()
            return await agent.resume_turn(parked.reply)

        return await self._turn(seen, updates, body)

    async def _turn(
        self, seen: SessionInfo, updates: Updates, body: Body, ask: bool = True
    ) -> TurnResult:
        settings = self.config.current
        try:
            provider = self.providers.get(settings.provider)
        except ConfigError as exc:
            return TurnResult(session=seen.id, status="error", error=str(exc))
        gate = self.asking if ask else self.quiet
        ctx = self.in_force.context()
        env = TurnEnv(seen.id, settings.turn, ctx, gate, updates, self.checkpoints)
        compactor = Compactor(provider, self.store, settings.turn)
        system, specs = self.in_force.told(seen.id)
        agent = Agent(provider, self.store, self.dispatcher, compactor, system, specs, env)
        return await self.turns.start(seen, lambda: body(agent), updates)

    def _parked(self, info: SessionInfo) -> ParkedReply | None:
        if info.status != PARKED:  # most turns: no view of the tools and no context to build
            return None
        return ParkedReply.load(self.store, info, self.tools.view(info.id), self.in_force.context())

    def _waiting(self, session: str) -> tuple[SessionInfo, ParkedReply]:
        info = self.turns.open(session)
        parked = self._parked(info)
        if parked is None:
            raise NothingWaiting(session)
        return info, parked
