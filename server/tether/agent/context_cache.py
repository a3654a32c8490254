"""A turn's context between rounds: what the store holds that can no longer change is
loaded once, and each round loads only what came after it.

A message before the first call still unanswered never changes again: a call is answered
once (``record_result``), the repair pass touches only unanswered calls, and messages
are never deleted. What can change which messages are sent (a compaction moves the
start, a conversation rewind hides spans) starts the cache afresh.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tether.models import Message
from tether.store.transcript import Transcript


@dataclass
class _Settled:
    since: int
    hidden: tuple[tuple[int, int], ...]
    until: int  # the messages with since <= seq < until are in ``messages``
    messages: list[Message] = field(default_factory=list)


class ContextCache:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self._settled: dict[str, _Settled] = {}

    def load(self, session: str, since: int, hidden: Sequence[tuple[int, int]]) -> list[Message]:
        """What ``Transcript.load(session, since=since, hidden=hidden)`` gives."""
        spans = tuple(hidden)
        settled = self._settled.get(session)
        if settled is None or settled.since != since or settled.hidden != spans:
            settled = _Settled(since, spans, since)
            self._settled[session] = settled
        end = self.transcript.next_seq(session)
        open_at = self.transcript.first_unanswered(session, settled.until)
        now = end if open_at is None else open_at
        if now > settled.until:
            settled.messages += self.transcript.load(
                session, since=settled.until, until=now, hidden=spans
            )
            settled.until = now
        rest = self.transcript.load(session, since=settled.until, hidden=spans)
        return [*settled.messages, *rest]
