"""The agent loop: stream a reply, store it, answer its calls, until it has none."""

from __future__ import annotations

from collections.abc import Sequence

from tether.agent.calls import TurnState
from tether.agent.compaction import Compactor
from tether.agent.dispatch import Dispatcher
from tether.agent.events import TextUpdate, Updates
from tether.config import TurnSettings
from tether.errors import ProviderError
from tether.models import Reply, ToolCall, TurnResult, UserMessage
from tether.providers.base import ChatRequest, Provider, TextDelta, ToolSpec
from tether.store import Store
from tether.store.sessions import Parked

BATCH_NUDGE = UserMessage(content="batch call")


class Agent:
    def __init__(
        self,
        provider: Provider,
        store: Store,
        dispatcher: Dispatcher,
        compactor: Compactor,
        system: str,
        tools: Sequence[ToolSpec],
        settings: TurnSettings,
    ) -> None:
        self.provider = provider
        self.store = store
        self.dispatcher = dispatcher
        self.compactor = compactor
        self.system = system
        self.tools = tuple(tools)
        self.settings = settings

    def new_turn(self) -> TurnState:
        return TurnState(budget=self.settings.tool_budget, repeat_limit=self.settings.repeat_limit)

    async def run_turn(self, session: str, prompt: str, updates: Updates) -> TurnResult:
        self.store.append_user(session, prompt)
        return await self.loop(session, self.new_turn(), updates)

    async def resume_turn(self, session: str, parked: Parked, updates: Updates) -> TurnResult:
        """Go on from a parked reply, with the decisions recorded since it parked."""
        turn = self.new_turn().count(self.store.turn_calls(session, before=parked.seq))
        # The parked reply's calls were granted budget when it was first dispatched.
        turn.budget = max(turn.budget, turn.used + len(parked.calls))
        await self.dispatcher.dispatch(session, parked.seq, parked.calls, turn, updates, parked)
        return await self.loop(session, turn, updates, last=parked.calls)

    async def loop(
        self, session: str, turn: TurnState, updates: Updates, last: Sequence[ToolCall] = ()
    ) -> TurnResult:
        while True:
            if turn.pending:
                return TurnResult(session=session, status="awaiting_approval", pending=turn.pending)
            if turn.stop_reason:
                return TurnResult(session=session, status="stopped", error=turn.stop_reason)
            turn.requests += 1
            if turn.requests > self.settings.max_requests:
                turn.stop_reason = f"the turn reached max_requests ({self.settings.max_requests})"
                continue
            # A lone call in the last round: remind the model, in the next request only, to batch.
            reply = await self.reply(session, len(last) == 1, updates)
            seq = self.store.append_reply(session, reply)
            if not reply.tool_calls:
                return TurnResult(session=session, status="done", answer=reply.text)
            await self.dispatcher.dispatch(session, seq, reply.tool_calls, turn, updates)
            last = reply.tool_calls

    async def reply(self, session: str, nudge: bool, updates: Updates) -> Reply:
        """One reply, streamed; the request is rebuilt from the store every round."""
        await self.compactor.maybe_compact(session)
        messages = (*self.compactor.context(session), *([BATCH_NUDGE] if nudge else []))
        request = ChatRequest(system=self.system, messages=messages, tools=self.tools)
        async for event in self.provider.stream(request):
            if isinstance(event, TextDelta):
                updates.send(TextUpdate(session=session, text=event.text))
            else:
                return event
        raise ProviderError("the provider's stream ended without a complete reply")
