"""The real Dispatcher, real Store and real tools, driven the way the agent loop drives them."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether.agent.approval import Gate, Nobody
from tether.agent.dispatch import Continue, Dispatcher
from tether.agent.env import TurnEnv
from tether.agent.events import NoUpdates
from tether.agent.plan import Counts
from tether.config import Settings
from tether.models import Reply, ToolCall, ToolMessage
from tether.store import Store, StoredReply
from tether.tools.base import NoDocuments, Tool, ToolContext
from tether.tools.index_view import Index, NoIndex

Spec = tuple[str, dict[str, Any]]  # a tool name and its arguments


class NoopParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = 0


class NoopTool:
    """A read-only tool that does no work: what is left is the dispatcher's own cost."""

    name = "noop"
    description = "Do nothing."
    params = NoopParams

    def read_only(self, params: NoopParams, ctx: ToolContext) -> bool:
        return True

    def summary(self, params: NoopParams, ctx: ToolContext) -> str:
        return f"noop {params.n}"

    async def run(self, params: NoopParams, ctx: ToolContext) -> str:
        return "ok"


class Harness:
    def __init__(
        self,
        workspace: Path,
        state_dir: Path,
        tools: Sequence[Tool[Any]],
        index: Index | None = None,
    ) -> None:
        self.settings = Settings.load({}, {"state_dir": str(state_dir)})
        self.store = Store(state_dir / "sessions.sqlite3")
        concurrency = self.settings.tools.max_concurrency
        self.dispatcher = Dispatcher(tools, self.store, lambda: concurrency)
        self.session = self.store.sessions.create(workspace, "bench")
        self.store.transcript.append_user(self.session, "bench")
        self.env = TurnEnv(
            self.session,
            self.settings.turn,
            ToolContext(workspace, NoDocuments(), self.settings.tools, index=index or NoIndex()),
            Gate(self.store, Nobody(), workspace),
            NoUpdates(),
        )
        self._ids = itertools.count()

    def store_reply(self, specs: Sequence[Spec]) -> StoredReply:
        """Store a reply holding these calls, as the loop does before dispatching it."""
        calls = tuple(
            ToolCall(id=f"call_{next(self._ids)}", name=name, arguments=json.dumps(args))
            for name, args in specs
        )
        return self.store.transcript.append_reply(self.session, Reply(tool_calls=calls))

    async def dispatch(self, reply: StoredReply) -> None:
        counts = Counts(budget=self.settings.turn.tool_budget)
        outcome = await self.dispatcher.dispatch(self.env, reply, counts)
        if not isinstance(outcome, Continue):
            raise RuntimeError(f"the bench turn stopped: {outcome}")

    def check_last(self, count: int) -> None:
        """Fail loudly unless the last ``count`` answers are ``ok``: never time error paths."""
        transcript = self.store.transcript.load(self.session)
        results = [m.result for m in transcript if isinstance(m, ToolMessage)]
        bad = [f"{r.tool}: {r.content[:200]}" for r in results[-count:] if r.status != "ok"]
        if bad:
            raise RuntimeError("bench calls failed:\n" + "\n".join(bad))

    def close(self) -> None:
        self.store.close()
