"""Auto-compaction: when the context nears the model's window, older rounds become a summary.

Compaction changes what is sent, never what is kept: the store keeps every message,
and a compaction only records "messages before seq N are replaced by this summary".
The cut always falls on a message boundary, so a call and its results (which follow
their reply) are never separated, and the newest rounds, a parked reply among them,
are kept verbatim.
"""

from __future__ import annotations

import json
import logging

from tether.agent.context_cache import ContextCache
from tether.config import TurnSettings
from tether.models import AssistantMessage, Message, ToolMessage, UserMessage
from tether.providers.base import ChatRequest, Provider, TextDelta
from tether.store import Store

log = logging.getLogger(__name__)
SUMMARY_HEAD = "[tether: the earlier part of this conversation, summarised to save room]"
INSTRUCTION = (
    "Summarise the conversation above for your own later use: the person's goals and "
    "requests, what you found (files, facts, decisions) and what you did, what is still "
    "open. Be specific (paths, names, numbers); omit pleasantries. Answer with the summary only."
)
SYSTEM = "You write faithful, compact summaries of coding sessions."


class Compactor:
    def __init__(self, provider: Provider, store: Store, settings: TurnSettings) -> None:
        self.provider = provider
        self.store = store
        self.settings = settings
        # Each round's context is mostly the last one's: load only what may have changed.
        self.loaded = ContextCache(store.transcript)

    def context(self, session: str) -> list[Message]:
        """What the model is sent: the latest summary, then everything after its cut, but
        what a conversation rewind took out."""
        latest = self.store.compactions.latest(session)
        hidden = self.store.checkpoints.hidden(session)  # rewound conversations
        if latest is None:
            return self.loaded.load(session, 0, hidden)
        summary = UserMessage(content=f"{SUMMARY_HEAD}\n\n{latest.summary}")
        return [summary, *self.loaded.load(session, latest.upto_seq, hidden)]

    def estimate(self, session: str, context: list[Message]) -> int:
        """Tokens in the context: the provider's own count when it is newer than any
        compaction, else about four characters a token."""
        usage = self.store.transcript.last_usage(session)
        latest = self.store.compactions.latest(session)
        if usage is not None and (latest is None or usage[0] > latest.at_seq):
            return usage[1]
        return sum(len(_render(m)) for m in context) // 4

    async def prepared(self, session: str) -> list[Message]:
        """This round's context: compacted first where it has grown past the threshold.
        Built once a round where nothing is compacted (most rounds), not once to weigh it
        and again to send it."""
        context = self.context(session)
        return self.context(session) if await self._compacted(session, context) else context

    async def maybe_compact(self, session: str) -> bool:
        return await self._compacted(session, self.context(session))

    async def _compacted(self, session: str, context: list[Message]) -> bool:
        if (
            self.estimate(session, context)
            < self.settings.context_tokens * self.settings.compact_at
        ):
            return False
        rounds = self.store.transcript.seqs(session, "assistant")
        if len(rounds) <= self.settings.keep_rounds:
            return False
        cut = rounds[-self.settings.keep_rounds]
        # Keep the prompt that asked for the first kept round with it.
        users = [seq for seq in self.store.transcript.seqs(session, "user") if seq < cut]
        cut = users[-1] if users and users[-1] == cut - 1 else cut
        latest = self.store.compactions.latest(session)
        if latest is not None and cut <= latest.upto_seq:
            return False
        older = self.store.transcript.load(
            session, since=latest.upto_seq if latest else 0, until=cut
        )
        if latest is not None:
            older.insert(0, UserMessage(content=latest.summary))
        summary = await self.summarise(older)
        at_seq = max(rounds[-1], *self.store.transcript.seqs(session, "user"))
        self.store.compactions.add(session, upto_seq=cut, at_seq=at_seq, summary=summary)
        log.info("compacted session %s before message %d", session, cut)
        return True

    async def summarise(self, older: list[Message]) -> str:
        transcript = "\n\n".join(_render(m) for m in older)
        request = ChatRequest(
            system=SYSTEM,
            messages=(UserMessage(content=f"{transcript}\n\n---\n{INSTRUCTION}"),),
        )
        parts: list[str] = []
        async for event in self.provider.stream(request):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            else:
                return event.text or "".join(parts)
        return "".join(parts)


def _render(message: Message) -> str:
    """A message as plain text, so any provider can summarise it without tool schemas."""
    match message:
        case UserMessage(content=content):
            return f"[person] {content}"
        case AssistantMessage(content=content, tool_calls=calls):
            called = "".join(
                f"\n[called {c.name} {json.dumps(c.parsed_arguments())}]" for c in calls
            )
            return f"[assistant] {content}{called}"
        case ToolMessage(result=r):
            return f"[result of {r.tool}: {r.status}] {r.content[:4000]}"
    return ""
