"""The service: what every front calls, one method per command of the contract.

The LSP front (``lsp/``) validates a request, calls one method here and returns what
it gives; so will any other front. The service holds no state of its own beyond
what it was built with (``app.py``): turns, the store, the settings.

What it is built with, and the commands that run a turn (``run``, ``approve``, ``deny``,
``applied``, ``cancel``), are ``turn_commands.py``'s; here are the commands around them:
what the editor shows, checkpoints, remembered approvals and scheduled tasks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from tether.agent.events import RewindUpdate, Updates
from tether.agent.liveness import as_seen, running_elsewhere
from tether.agent.parked import planned_edit
from tether.agent.schedule import parse_every
from tether.checkpoints.rewind import rewind
from tether.errors import Refused, SessionBusy
from tether.history import History, HistoryMessage, Rewind, Rewound, message_to_wire
from tether.models import (
    PARKED,
    Compaction,
    Message,
    PendingCall,
    RewindWhat,
    SessionInfo,
    Task,
)
from tether.service.turn_commands import TurnCommands
from tether.store.rules import Rule
from tether.tools.base import FileEdit

log = logging.getLogger(__name__)


class Service(TurnCommands):
    """Every command of the contract: the turn commands it inherits, and the rest."""

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
