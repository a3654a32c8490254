"""The service built by the real composition root, with scripted seams: a scripted
provider, a scripted person, and simple tools. No LSP, no network."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.doubles import EchoTool, ScriptedProvider, WriteTool
from tether import app
from tether.agent.approval import Answer, Question
from tether.agent.events import Update
from tether.config import Configuration, ProviderSettings
from tether.models import PendingCall, ToolMessage, TurnResult
from tether.providers import Providers
from tether.providers.base import Provider
from tether.tools.base import NoDocuments, NoEditor


class Recorder:
    def __init__(self) -> None:
        self.updates: list[Update] = []

    def send(self, update: Update) -> None:
        self.updates.append(update)


class ScriptedPerson:
    """Answers approval questions from a script, and counts budget questions."""

    def __init__(self) -> None:
        self.decisions: list[Answer | None] = []
        self.asked: list[PendingCall] = []
        self.questions: list[Question] = []
        self.extend: bool | None = False  # None: hang until cancelled
        self.budget_questions = 0
        self.budget_asked = asyncio.Event()

    def can_ask(self) -> bool:
        return True

    async def ask(self, session: str, question: Question) -> Answer | None:
        self.asked.append(question.call)
        self.questions.append(question)
        return self.decisions.pop(0)

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        self.budget_questions += 1
        self.budget_asked.set()
        if self.extend is None:
            await asyncio.Event().wait()
        return bool(self.extend)

    async def allow_server(self, name: str, shown: str) -> bool:
        return False


class OneProvider(Providers):
    def __init__(self, provider: Provider) -> None:
        super().__init__()
        self.provider = provider

    def get(self, settings: ProviderSettings) -> Provider:
        return self.provider


class Harness:
    def __init__(self, tmp_path: Path, provider: ScriptedProvider, **turn: Any) -> None:
        self.config = Configuration({})
        assert (
            self.config.set_layer("test", {"turn": turn, "state_dir": str(tmp_path / "state")})
            is None
        )
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir(exist_ok=True)
        self.echo = EchoTool()
        self.person = ScriptedPerson()
        self.provider = provider
        self.service = app.build(
            self.config,
            self.workspace,
            NoDocuments(),
            self.person,
            NoEditor(),
            tools=[self.echo, WriteTool()],
            providers=OneProvider(provider),
        )
        self.store = self.service.store
        self.recorder = Recorder()

    def session(self, prompt: str = "go") -> str:
        return self.service.open(prompt, None)

    async def run(self, prompt: str = "go", session: str | None = None) -> TurnResult:
        session = session or self.session(prompt)
        return await self.service.run(session, prompt, self.recorder)

    def start(self, prompt: str = "go") -> tuple[str, asyncio.Task[TurnResult]]:
        session = self.session(prompt)
        return session, asyncio.create_task(self.run(prompt, session))

    def answers(self, session: str) -> list[tuple[str, str, str]]:
        return [
            (m.result.call_id, m.result.status, m.result.content)
            for m in self.store.transcript.load(session)
            if isinstance(m, ToolMessage)
        ]

    def statuses(self, session: str) -> list[str]:
        return [status for _, status, _ in self.answers(session)]
