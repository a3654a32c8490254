"""The composition root: settings, store, provider, tools and agent wired together.

``Tether`` is the facade the protocol front calls, one method per command.
"""

from __future__ import annotations

import logging
from pathlib import Path

from tether.agent.approval import Approver
from tether.agent.dispatch import Dispatcher
from tether.agent.events import Updates
from tether.agent.loop import Agent
from tether.agent.owners import as_seen
from tether.agent.prompt import system_prompt
from tether.agent.turns import Turns
from tether.config import Settings
from tether.errors import ConfigError
from tether.models import History, SessionInfo, TurnResult, message_to_wire
from tether.providers import make_provider
from tether.providers.base import Provider, ToolSpec
from tether.store import Store
from tether.tools import builtin_tools
from tether.tools.base import Documents, ToolContext

log = logging.getLogger(__name__)


class Tether:
    def __init__(
        self, settings: Settings, workspace: Path, documents: Documents, approver: Approver
    ) -> None:
        self.settings = settings
        self.workspace = workspace.resolve()
        self.documents = documents
        self.approver = approver
        self.store = Store(settings.state_dir / "sessions.sqlite3")
        self.turns = Turns(self.store)

    def reconfigure(self, settings: Settings) -> None:
        """New settings apply from the next turn; a running turn keeps its own."""
        if settings.state_dir != self.settings.state_dir:
            log.warning("state_dir changes take effect when tether restarts")
            settings = settings.model_copy(update={"state_dir": self.settings.state_dir})
        self.settings = settings

    def agent(self, provider: Provider) -> Agent:
        tools = builtin_tools()
        ctx = ToolContext(self.workspace, self.documents, self.settings.tools)
        dispatcher = Dispatcher(tools, ctx, self.store, self.approver, self.settings)
        specs = [
            ToolSpec(
                name=t.name, description=t.description, parameters=t.params.model_json_schema()
            )
            for t in tools
        ]
        prompt = system_prompt(self.workspace, tools)
        return Agent(provider, self.store, dispatcher, prompt, specs, self.settings.turn)

    def open_session(self, prompt: str, session: str | None) -> str:
        if session is None:
            return self.store.create_session(self.workspace, prompt)
        return self.turns.open(session)

    async def run(self, session: str, prompt: str, updates: Updates) -> TurnResult:
        try:
            provider = make_provider(self.settings.provider)
        except ConfigError as exc:
            return TurnResult(session=session, status="error", error=str(exc))
        try:
            return await self.turns.run(self.agent(provider), session, prompt, updates)
        finally:
            await provider.aclose()

    def cancel(self, session: str) -> bool:
        self.store.session(session)
        return self.turns.cancel(session)

    def sessions(self) -> list[SessionInfo]:
        return [as_seen(info) for info in self.store.sessions(self.workspace)]

    def history(self, session: str) -> History:
        if not self.turns.is_running(session):
            self.turns.open(session)
        return History(
            messages=[message_to_wire(m) for m in self.store.load(session)],
            stats=self.store.stats(session),
        )

    async def shutdown(self) -> None:
        await self.turns.shutdown()
        self.store.close()
