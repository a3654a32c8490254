"""The one place a call of a stored reply gets its answer: committed the moment it is
known (so a crash loses nothing that finished), then told to the editor."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from tether.agent.events import ToolResultUpdate, Updates
from tether.models import ToolResult, ToolStatus, iso, now
from tether.store import Store, StoredReply

UPDATE_PREVIEW_CHARS = 4000


class Answers:
    def __init__(self, store: Store, reply: StoredReply, updates: Updates) -> None:
        self.store = store
        self.reply = reply
        self.updates = updates
        self.answered: set[int] = set(reply.answered)
        self.started: dict[int, datetime] = {}
        self.partial: dict[int, str] = {}  # the output of calls cut off while they ran

    def is_open(self, idx: int) -> bool:
        return idx not in self.answered

    def start(self, idx: int) -> None:
        """Mark the call started before it runs: after a crash it is then `interrupted`."""
        self.started[idx] = now()
        self.store.transcript.mark_started(
            self.reply.session, self.reply.seq, idx, self.started[idx]
        )

    def answer(
        self,
        idx: int,
        status: ToolStatus,
        content: str,
        decided_by: str | None = None,
        sandboxed: bool | None = None,
    ) -> None:
        if idx in self.answered:
            return
        call = self.reply.calls[idx]
        started = self.started.get(idx)
        result = ToolResult(
            call_id=call.id,
            tool=call.name,
            status=status,
            content=content,
            started_at=started,
            ended_at=now() if started else None,
            decided_by=decided_by,
            sandboxed=sandboxed,
        )
        self.store.transcript.record_result(self.reply.session, self.reply.seq, idx, result)
        self.answered.add(idx)
        self.updates.send(
            ToolResultUpdate(
                session=self.reply.session,
                call_id=call.id,
                tool=call.name,
                status=status,
                content=content[:UPDATE_PREVIEW_CHARS],
                started_at=iso(result.started_at),
                ended_at=iso(result.ended_at),
            )
        )

    def close(self, why: str, keep: Collection[int] = ()) -> None:
        """Answer every call still open but those in ``keep`` (calls that wait)."""
        for idx in range(len(self.reply.calls)):
            if idx in keep or idx in self.answered:
                continue
            if idx in self.started:
                said = f"interrupted: {why} while it ran."
                if output := self.partial.get(idx, "").rstrip("\n"):
                    said += f" Its output until then (the last of it):\n{output}"
                self.answer(idx, "interrupted", said)
            else:
                self.answer(idx, "not_executed", f"not executed: {why}; it never ran.")
