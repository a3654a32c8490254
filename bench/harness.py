"""The real Dispatcher, real Store and real tools, driven the way the agent loop drives them."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from tether.agent.approval import Gate, Nobody
from tether.agent.calls import TurnState
from tether.agent.dispatch import Dispatcher
from tether.agent.events import NoUpdates
from tether.config import Settings
from tether.models import Reply, ToolCall, ToolMessage
from tether.store import Store
from tether.tools.base import NoDocuments, Tool, ToolContext

Spec = tuple[str, dict[str, Any]]  # a tool name and its arguments


class NoopParams(BaseModel):
    model_config = ConfigDict(extra="forbid")
    n: int = 0


class NoopTool:
    """A read-only tool that does no work: what is left is the dispatcher's own cost."""

    name = "noop"
    description = "Do nothing."
    params: type[BaseModel] = NoopParams

    def read_only(self, params: NoopParams, ctx: ToolContext) -> bool:
        return True

    def summary(self, params: NoopParams, ctx: ToolContext) -> str:
        return f"noop {params.n}"

    async def run(self, params: NoopParams, ctx: ToolContext) -> str:
        return "ok"


class Harness:
    def __init__(self, workspace: Path, state_dir: Path, tools: Sequence[Tool]) -> None:
        self.settings = Settings.load({}, {"state_dir": str(state_dir)})
        self.ctx = ToolContext(workspace, NoDocuments(), self.settings.tools)
        self.store = Store(state_dir / "sessions.sqlite3")
        approvals = Gate(self.store, Nobody(), workspace)
        self.dispatcher = Dispatcher(tools, self.ctx, self.store, approvals, self.settings)
        self.session = self.store.create_session(workspace, "bench")
        self.store.append_user(self.session, "bench")
        self._ids = itertools.count()

    def store_reply(self, specs: Sequence[Spec]) -> tuple[int, tuple[ToolCall, ...]]:
        """Store a reply holding these calls, as the loop does before dispatching it."""
        calls = tuple(
            ToolCall(id=f"call_{next(self._ids)}", name=name, arguments=json.dumps(args))
            for name, args in specs
        )
        return self.store.append_reply(self.session, Reply(tool_calls=calls)), calls

    async def dispatch(self, seq: int, calls: Sequence[ToolCall]) -> None:
        turn = TurnState(
            budget=self.settings.turn.tool_budget, repeat_limit=self.settings.turn.repeat_limit
        )
        await self.dispatcher.dispatch(self.session, seq, calls, turn, NoUpdates())
        if turn.stop_reason or turn.pending:
            raise RuntimeError(f"the bench turn stopped: {turn.stop_reason or turn.pending}")

    def check_last(self, count: int) -> None:
        """Fail loudly unless the last ``count`` answers are ``ok``: never time error paths."""
        results = [m.result for m in self.store.load(self.session) if isinstance(m, ToolMessage)]
        bad = [f"{r.tool}: {r.content[:200]}" for r in results[-count:] if r.status != "ok"]
        if bad:
            raise RuntimeError("bench calls failed:\n" + "\n".join(bad))

    def close(self) -> None:
        self.store.close()
