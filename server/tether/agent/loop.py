"""The agent loop: stream a reply, store it, answer its calls, until it has none."""

from __future__ import annotations

from collections.abc import Sequence

from tether.agent.compaction import Compactor
from tether.agent.dispatch import Continue, Dispatcher, Outcome, Parked, Stopped
from tether.agent.env import TurnEnv
from tether.agent.events import TextUpdate, UsageUpdate
from tether.agent.plan import Counts
from tether.agent.prepare import call_key
from tether.errors import ProviderError
from tether.models import Message, Reply, ToolCall, TurnResult, Usage, UserMessage
from tether.providers.base import ChatRequest, Provider, TextDelta, ToolSpec
from tether.store import Store, StoredReply

BATCH_NUDGE = UserMessage(content="batch call")


class Agent:
    """One turn of one session: built per turn, with the settings it started with."""

    def __init__(
        self,
        provider: Provider,
        store: Store,
        dispatcher: Dispatcher,
        compactor: Compactor,
        system: str,
        tools: Sequence[ToolSpec],
        env: TurnEnv,
    ) -> None:
        self.provider = provider
        self.store = store
        self.dispatcher = dispatcher
        self.compactor = compactor
        self.system = system
        self.tools = tuple(tools)
        self.env = env

    async def run_turn(self, prompt: str) -> TurnResult:
        self.store.transcript.append_user(self.env.session, prompt)
        return await self.loop(Continue(Counts(budget=self.env.settings.tool_budget)))

    async def resume_turn(self, reply: StoredReply) -> TurnResult:
        """Go on from a parked reply, with the decisions recorded since it parked."""
        earlier = self.store.transcript.turn_calls(self.env.session, before=reply.seq)
        budget = self.env.settings.tool_budget
        counts = Counts.resuming(budget, [call_key(c) for c in earlier], len(reply.calls))
        outcome = await self.dispatcher.dispatch(self.env, reply, counts)
        return await self.loop(outcome, last=reply.calls)

    async def loop(self, outcome: Outcome, last: Sequence[ToolCall] = ()) -> TurnResult:
        try:
            return await self._rounds(outcome, last)
        finally:
            # However the turn ends (parked too: a resume takes it again), its checkpoint.
            if self.env.checkpoints is not None:
                await self.env.checkpoints.turn_ended(self.env.session)

    async def _rounds(self, outcome: Outcome, last: Sequence[ToolCall]) -> TurnResult:
        session, limit = self.env.session, self.env.settings.max_requests
        requests = 0
        while True:
            match outcome:
                case Parked(pending=pending):
                    return TurnResult(session=session, status="awaiting_approval", pending=pending)
                case Stopped(reason=reason):
                    return TurnResult(session=session, status="stopped", error=reason)
                case Continue() if requests == limit:
                    outcome = Stopped(f"the turn reached max_requests ({limit})")
                case Continue(counts=counts):
                    requests += 1
                    # A lone call in the last round: remind the model, in the next request
                    # only, to batch.
                    reply = await self.reply(nudge=len(last) == 1)
                    stored = self.store.transcript.append_reply(session, reply)
                    if not reply.tool_calls:
                        return TurnResult(session=session, status="done", answer=reply.text)
                    outcome = await self.dispatcher.dispatch(self.env, stored, counts)
                    last = reply.tool_calls

    async def reply(self, nudge: bool) -> Reply:
        """One reply, streamed; the request is rebuilt from the store every round."""
        session = self.env.session
        messages = (*await self.compactor.prepared(session), *([BATCH_NUDGE] if nudge else []))
        request = ChatRequest(system=self.system, messages=messages, tools=self.tools)
        async for event in self.provider.stream(request):
            if isinstance(event, TextDelta):
                self.env.updates.send(TextUpdate(session=session, text=event.text))
            else:
                self.env.updates.send(self.usage(event, messages))
                return event
        raise ProviderError(
            "the model provider's reply stopped before it was whole; none of it was kept, "
            "so sending the prompt again is safe"
        )

    def usage(self, reply: Reply, sent: Sequence[Message]) -> UsageUpdate:
        """What the request cost and how full the context is: the provider's own count, or
        about four characters a token where it reports none."""
        used = reply.usage or Usage()
        context = used.input_tokens + used.output_tokens
        if reply.usage is None:
            context = self.compactor.estimate(self.env.session, list(sent))
        return UsageUpdate(
            session=self.env.session,
            input_tokens=used.input_tokens,
            output_tokens=used.output_tokens,
            context_tokens=context,
            context_window=self.env.settings.context_tokens,
        )
