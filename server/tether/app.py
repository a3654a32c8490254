"""The composition root: settings, store, provider, tools and agent wired together.

``Tether`` is the facade the protocol front calls, one method per command.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal

from tether.agent.approval import Gate, Nobody, Person
from tether.agent.compaction import Compactor
from tether.agent.dispatch import Dispatcher
from tether.agent.events import Updates
from tether.agent.loop import Agent
from tether.agent.owners import as_seen, running_elsewhere
from tether.agent.prompt import system_prompt
from tether.agent.schedule import Scheduler
from tether.agent.turns import PARKED, Turns
from tether.config import ProviderSettings, Settings
from tether.errors import ConfigError, RequestError
from tether.models import (
    Compaction,
    History,
    PendingCall,
    RecordedDecision,
    SessionInfo,
    Task,
    TurnResult,
    message_to_wire,
)
from tether.providers import make_provider
from tether.providers.base import Provider, ToolSpec
from tether.store import Store
from tether.tools import builtin_tools
from tether.tools.base import (
    Documents,
    Editor,
    EditsFiles,
    FileEdit,
    Memory,
    Tool,
    ToolContext,
)

log = logging.getLogger(__name__)
Scope = Literal["session", "workspace"]


class Tether:
    def __init__(
        self,
        settings: Settings,
        workspace: Path,
        documents: Documents,
        person: Person,
        editor: Editor,
    ) -> None:
        self.settings = settings
        self.workspace = workspace.resolve()
        self.documents = documents
        self.editor = editor
        self.store = Store(settings.state_dir / "sessions.sqlite3")
        self.gate = Gate(self.store, person, self.workspace)
        # Scheduled turns never pop a dialog: their approval-requiring calls park.
        self.quiet_gate = Gate(self.store, Nobody(), self.workspace)
        self.turns = Turns(self.store)
        self._provider: tuple[ProviderSettings, Provider] | None = None
        self._retired: list[Provider] = []
        self.scheduler = Scheduler(self.store.tasks, str(self.workspace), self._not_serving)

    async def _not_serving(self, task: Task) -> None:
        """Before the front starts the scheduler, nothing runs."""

    def reconfigure(self, settings: Settings) -> None:
        """New settings apply from the next turn; a running turn keeps its own."""
        if settings.state_dir != self.settings.state_dir:
            log.warning("state_dir changes take effect when tether restarts")
            settings = settings.model_copy(update={"state_dir": self.settings.state_dir})
        self.settings = settings

    def context(self) -> ToolContext:
        key = self.settings.provider.api_key
        secrets = (key.get_secret_value(),) if key else ()
        return ToolContext(
            self.workspace, self.documents, self.settings.tools, self.editor, secrets
        )

    def dispatcher(self, ask: bool = True) -> Dispatcher:
        gate = self.gate if ask else self.quiet_gate
        return Dispatcher(self.tools, self.context(), self.store, gate, self.settings)

    @functools.cached_property
    def tools(self) -> list[Tool]:
        return builtin_tools()

    @functools.cached_property
    def specs(self) -> list[ToolSpec]:
        """What the model is told of the tools (schema generation costs ~15 ms: once)."""
        return [
            ToolSpec(
                name=t.name, description=t.description, parameters=t.params.model_json_schema()
            )
            for t in self.tools
        ]

    def provider(self) -> Provider:
        """One provider (and its connection pool) for as long as its settings hold."""
        wanted = self.settings.provider
        if self._provider is None or self._provider[0] != wanted:
            if self._provider is not None:
                self._retired.append(self._provider[1])  # a running turn may still use it
            self._provider = (wanted, make_provider(wanted))
        return self._provider[1]

    async def _with_agent(
        self, session: str, go: Callable[[Agent], Awaitable[TurnResult]], ask: bool = True
    ) -> TurnResult:
        try:
            provider = self.provider()
        except ConfigError as exc:
            return TurnResult(session=session, status="error", error=str(exc))
        prompt = system_prompt(self.workspace, self.tools)
        compactor = Compactor(provider, self.store, self.settings.turn)
        agent = Agent(
            provider,
            self.store,
            self.dispatcher(ask),
            compactor,
            prompt,
            self.specs,
            self.settings.turn,
        )
        return await go(agent)

    def open_session(self, prompt: str, session: str | None) -> str:
        if session is None:
            return self.store.create_session(self.workspace, prompt)
        return self.turns.open(session)

    async def run(
        self, session: str, prompt: str, updates: Updates, ask: bool = True
    ) -> TurnResult:
        return await self._with_agent(
            session, lambda agent: self.turns.run(agent, session, prompt, updates), ask
        )

    # -- scheduled tasks -------------------------------------------------------

    def schedule(self, prompt: str, every: str, session: str | None) -> Task:
        if session is not None:
            self.store.session(session)
        task = self.store.tasks.add(str(self.workspace), prompt, every, session)
        self.scheduler.wake()
        return task

    def unschedule(self, task: str) -> None:
        self.store.tasks.remove(task)
        self.scheduler.wake()

    def tasks(self) -> list[Task]:
        return self.store.tasks.listed(str(self.workspace))

    def start_scheduler(self, updates_for: Callable[[str], Updates]) -> Scheduler:
        async def run_task(task: Task) -> None:
            session = task.session
            try:
                if session is not None and self.store.session(session).status == PARKED:
                    raise RequestError("its session waits for approval")
                session = self.open_session(task.prompt, session)
            except RequestError as exc:
                self.store.tasks.finished(task.id, f"skipped: {exc}", session or "")
                return
            result = await self.run(session, task.prompt, updates_for(session), ask=False)
            self.store.tasks.finished(task.id, result.status, session)

        self.scheduler = Scheduler(self.store.tasks, str(self.workspace), run_task)
        return self.scheduler

    def waiting(self, session: str) -> list[tuple[PendingCall, Memory | None]]:
        """The session's calls that wait for a decision; none unless its turn is parked."""
        if self.store.session(session).status != PARKED:
            return []
        parked = self.store.parked(session)
        return self.dispatcher().waiting(parked) if parked else []

    async def applied(self, session: str, call: str, updates: Updates) -> TurnResult:
        tools = {tool.name: tool for tool in self.tools}
        waiting = {pending.call_id: pending.tool for pending, _ in self.waiting(session)}
        if call in waiting and not isinstance(tools.get(waiting[call]), EditsFiles):
            raise RequestError(f"call {call} is a {waiting[call]}, not a file edit")
        self._decide(session, [call], "applied", None)
        return await self._with_agent(
            session, lambda agent: self.turns.resume(agent, session, updates)
        )

    def _decide(
        self,
        session: str,
        calls: list[str] | None,
        decision: RecordedDecision,
        reason: str | None,
    ) -> list[tuple[PendingCall, Memory | None]]:
        self.turns.open(session)
        waiting = self.waiting(session)
        if not waiting:
            raise RequestError(f"session {session!r} has no calls waiting for approval")
        by_id = {pending.call_id: (pending, memory) for pending, memory in waiting}
        unknown = sorted(set(calls or ()) - set(by_id))
        if unknown:
            raise RequestError(f"no pending call {', '.join(unknown)} in session {session!r}")
        chosen = [by_id[c] for c in calls] if calls else waiting
        parked = self.store.parked(session)
        assert parked is not None
        for pending, _ in chosen:
            self.store.decide(session, parked.seq, pending.call_id, decision, reason)
        return chosen

    async def approve(
        self, session: str, calls: list[str] | None, remember: Scope | None, updates: Updates
    ) -> TurnResult:
        for pending, memory in self._decide(session, calls, "allow", None):
            if remember and memory:
                self.gate.remember(remember, session, pending.tool, memory)
        return await self._with_agent(
            session, lambda agent: self.turns.resume(agent, session, updates)
        )

    async def deny(
        self, session: str, calls: list[str] | None, reason: str | None, updates: Updates
    ) -> TurnResult:
        self._decide(session, calls, "deny", reason or "the person denied it")
        return await self._with_agent(
            session, lambda agent: self.turns.resume(agent, session, updates)
        )

    def cancel(self, session: str, updates: Updates) -> bool:
        return self.turns.cancel(session, updates)

    def sessions(self) -> list[SessionInfo]:
        return [as_seen(info) for info in self.store.sessions(self.workspace)]

    def history(self, session: str) -> History:
        info = self.store.session(session)
        if not (self.turns.is_running(session) or running_elsewhere(info)):
            self.turns.open(session)  # repair what a dead server left, before reading
        compactions = [
            Compaction(
                before=len(self.store.load(session, until=c.upto_seq)),
                summary=c.summary,
                created=c.created,
            )
            for c in self.store.compactions.listed(session)
        ]
        return History(
            messages=[message_to_wire(m) for m in self.store.load(session)],
            pending=[pending for pending, _ in self.waiting(session)],
            stats=self.store.stats(session),
            compactions=compactions,
        )

    def pending_everywhere(self) -> dict[str, list[PendingCall]]:
        """Every parked session's waiting calls, for the editor's code actions."""
        parked = [s.id for s in self.store.sessions(self.workspace) if s.status == PARKED]
        return {s: [p for p, _ in self.waiting(s)] for s in parked}

    async def planned_edit(self, session: str, call_id: str) -> FileEdit | None:
        parked = self.store.parked(session)
        return await self.dispatcher().planned_edit(parked, call_id) if parked else None

    async def shutdown(self) -> None:
        await self.turns.shutdown()
        for provider in [*self._retired, *([self._provider[1]] if self._provider else [])]:
            await provider.aclose()
        self.store.close()
