"""The service: what every front calls, one method per command of the contract.

The LSP front (``lsp/``) validates a request, calls one method here and returns what
it gives; so will any other front. The service holds no state of its own beyond
what it was built with (``app.py``): turns, the store, the settings.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from tether.agent.approval import Gate
from tether.agent.compaction import Compactor
from tether.agent.dispatch import Dispatcher
from tether.agent.env import TurnEnv
from tether.agent.events import RewindUpdate, Updates, ended
from tether.agent.liveness import as_seen, running_elsewhere
from tether.agent.loop import Agent
from tether.agent.parked import ParkedReply, planned_edit
from tether.agent.schedule import Scheduler, parse_every
from tether.agent.turns import Turns
from tether.checkpoints.record import Checkpoints
from tether.checkpoints.rewind import rewind
from tether.config import Configuration
from tether.errors import ConfigError, NothingWaiting, Refused, SessionBusy
from tether.history import History, HistoryMessage, Rewind, Rewound, message_to_wire
from tether.index.workspace import WorkspaceIndex
from tether.mcp_source import McpServers
from tether.models import (
    PARKED,
    Compaction,
    Message,
    PendingCall,
    RecordedChoice,
    RewindWhat,
    Scope,
    SessionInfo,
    Task,
    TurnResult,
)
from tether.providers import Providers
from tether.store import Store
from tether.store.rules import Rule
from tether.tools.base import (
    Documents,
    Editor,
    EditsFiles,
    FileEdit,
    Tool,
)
from tether.tools.toolbox import Toolbox, toolbox
from tether.workspace_tools import WorkspaceTools

log = logging.getLogger(__name__)
Body = Callable[[Agent], Awaitable[TurnResult]]


class Service:
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
        return ParkedReply.load(self.store, info, self.tools.view(info.id), self.in_force.context())

    def _waiting(self, session: str) -> tuple[SessionInfo, ParkedReply]:
        info = self.turns.open(session)
        parked = self._parked(info)
        if parked is None:
            raise NothingWaiting(session)
        return info, parked

    # -- what the editor shows ------------------------------------------------------------

    def sessions(self, everywhere: bool = False) -> list[SessionInfo]:
        """This workspace's sessions, or (``everywhere``) every workspace's in the store."""
        listed = self.store.sessions.listed(None if everywhere else self.workspace)
        return [as_seen(info) for info in listed]

    def history(self, session: str) -> History:
        """The session as a person sees it: a turn a dead server left shows as the repair
        pass will leave it, without anything being written by this read."""
        info = self.store.sessions.get(session)
        parked = self._parked(info)
        dead = not (self.turns.is_running(session) or running_elsewhere(info))
        keep = parked.reply.seq if parked else None
        transcript = self.store.transcript

        def load(until: int | None = None) -> list[Message]:
            return transcript.load(session, until=until, as_repaired=dead, keep=keep)

        compactions = [
            Compaction(
                before=len(load(until=c.upto_seq)),
                summary=c.summary,
                created=c.created,
            )
            for c in self.store.compactions.listed(session)
        ]
        rewinds = [
            Rewind.model_validate_json(r.report).model_copy(
                update={"before": len(load(until=r.until_seq)), "created": r.created}
            )
            for r in self.store.checkpoints.rewinds(session)
        ]
        return History(
            messages=_with_turns(message_to_wire(m) for m in load()),
            pending=parked.pending() if parked else [],
            stats=transcript.stats(session),
            compactions=compactions,
            checkpoints=self.checkpoints.listed(session),
            rewinds=rewinds,
        )

    # -- checkpoints ----------------------------------------------------------------------

    async def rewind(
        self, session: str, turn: int | None, what: RewindWhat, updates: Updates
    ) -> Rewound:
        """Take back a turn: its change to the files (the person's edits since stay), what
        the model is sent of it and everything after, or both."""
        info = self.store.sessions.get(session)
        if self.turns.is_running(session) or running_elsewhere(info):
            raise SessionBusy(session)
        if info.status == PARKED:
            raise Refused(
                f"session {session!r} waits for approval: approve, deny or cancel its calls "
                "before rewinding it"
            )
        result = await rewind(self.checkpoints, self.editor, session, turn, what)
        updates.send(RewindUpdate(**result.model_dump()))
        return result

    async def prune_checkpoints(self) -> None:
        if pruned := await self.checkpoints.prune():
            log.info("pruned %d checkpoints older than checkpoint.keep_days", pruned)

    def pending_everywhere(self) -> dict[str, list[PendingCall]]:
        """Every parked session's waiting calls, for the editor's code actions."""
        parked = (
            self._parked(s)
            for s in self.store.sessions.listed(self.workspace)
            if s.status == PARKED
        )
        return {p.session: p.pending() for p in parked if p is not None}

    async def planned_edit(self, session: str, call_id: str) -> FileEdit:
        """What a waiting patch would do to its file; ``Refused`` says why there is nothing."""
        self.store.sessions.get(session)
        tools = self.tools.view(session)
        return await planned_edit(self.store, session, call_id, tools, self.in_force.context())

    # -- remembered approvals ---------------------------------------------------------

    def rules(self) -> list[Rule]:
        return self.store.rules.of_workspace(str(self.workspace))

    def forget(self, rule: str) -> bool:
        """Remove one of this workspace's rules; False when there is no such rule."""
        if not rule.isdigit() or int(rule) not in {r.id for r in self.rules()}:
            return False
        return self.store.rules.remove(int(rule))

    # -- scheduled tasks ----------------------------------------------------------------

    def schedule(self, prompt: str, every: str, session: str | None) -> Task:
        try:
            seconds = parse_every(every)
        except ValueError as exc:
            raise Refused(str(exc)) from None
        if session is not None:
            self.store.sessions.get(session)
        task = self.store.tasks.add(str(self.workspace), prompt, every.strip(), seconds, session)
        self.scheduler.wake()
        return task

    def unschedule(self, task: str) -> None:
        self.store.tasks.remove(task)
        self.scheduler.wake()

    def tasks(self) -> list[Task]:
        return self.store.tasks.listed(str(self.workspace))

    async def serve_schedule(self, updates_for: Callable[[str], Updates]) -> None:
        """Run due tasks until cancelled, through the same turn path as ``run``."""

        async def run(task: Task) -> None:
            session = task.session
            try:
                if session is not None and self.store.sessions.get(session).status == PARKED:
                    raise Refused("its session waits for approval")
                session = self.open(task.prompt, session)
                result = await self.run(session, task.prompt, updates_for(session), ask=False)
            except Refused as exc:  # a busy session too
                self.store.tasks.finished(task.id, f"skipped: {exc}", session or "")
                return
            self.store.tasks.finished(task.id, result.status, session)

        await self.scheduler.serve(run)

    async def shutdown(self) -> None:
        await self.turns.shutdown()  # every call in flight is answered first
        await self.in_force.close()
        await self.providers.aclose()
        self.store.close()


def _with_turns(messages: Iterable[HistoryMessage]) -> list[HistoryMessage]:
    """Each message with the turn it belongs to: a prompt begins the next one."""
    turn, out = 0, []
    for message in messages:
        turn += message.role == "user"
        out.append(message.model_copy(update={"turn": turn or None}))
    return out
