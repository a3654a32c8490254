"""A session's transcript read back: its messages in order, the newest reply and its
calls, and the numbers compaction and the checkpoints count by.

The reading half of ``Transcript`` (``transcript.py`` writes, in the order that makes it
crash-safe). Its own module because reads also show a transcript *as repaired* without
writing anything: how an unanswered call reads once the repair pass has answered it is
here, beside the rows it is read from.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from tether.models import (
    AssistantMessage,
    Frozen,
    Message,
    RecordedChoice,
    Stats,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolStatus,
    UserMessage,
    parse_iso,
)
from tether.store.stats import session_stats

REPAIR_REASON = "unanswered_tool_call_repair"
REPAIRED_CONTENT: dict[ToolStatus, str] = {
    "interrupted": (
        "interrupted: this call had started when tether stopped, and it never finished. "
        "It may have had effects; check before repeating it."
    ),
    "cancelled": (
        "cancelled: this call never started (tether stopped first). Nothing was run; "
        "call it again if you still need it."
    ),
}


class StoredReply(Frozen):
    """An assistant reply as stored: its calls (by index), which have answers, and the
    decisions a person recorded on the others while they waited."""

    session: str
    seq: int
    calls: tuple[ToolCall, ...]
    answered: frozenset[int] = frozenset()
    choices: dict[int, RecordedChoice] = {}

    @property
    def complete(self) -> bool:
        return len(self.answered) == len(self.calls)


class TranscriptReads:
    """What is read back of the transcripts; ``Transcript`` adds the writes."""

    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def last_reply(self, session: str) -> StoredReply | None:
        """The newest reply, if it has calls."""
        (seq,) = self._db.execute(
            "SELECT MAX(seq) FROM messages WHERE session_id = ? AND role = 'assistant'",
            (session,),
        ).fetchone()
        if seq is None:
            return None
        rows = self._db.execute(
            "SELECT * FROM tool_calls WHERE session_id = ? AND message_seq = ? ORDER BY idx",
            (session, seq),
        ).fetchall()
        if not rows:
            return None
        return StoredReply(
            session=session,
            seq=seq,
            calls=tuple(map(_call, rows)),
            answered=frozenset(r["idx"] for r in rows if r["status"]),
            choices={
                r["idx"]: RecordedChoice(decision=r["decision"], reason=r["decision_reason"])
                for r in rows
                if r["decision"]
            },
        )

    def turn_calls(self, session: str, before: int) -> list[ToolCall]:
        """The calls this turn made before reply ``before``: since the last prompt."""
        rows = self._db.execute(
            "SELECT * FROM tool_calls WHERE session_id = ? AND message_seq < ? AND message_seq >"
            " (SELECT COALESCE(MAX(seq), -1) FROM messages"
            "  WHERE session_id = ? AND role = 'user' AND seq < ?)"
            " ORDER BY message_seq, idx",
            (session, before, session, before),
        ).fetchall()
        return [_call(row) for row in rows]

    def load(
        self,
        session: str,
        since: int = 0,
        until: int | None = None,
        as_repaired: bool = False,
        keep: int | None = None,
        hidden: Sequence[tuple[int, int]] = (),
    ) -> list[Message]:
        """The transcript in order (messages ``since`` <= seq < ``until``); each reply's
        answers follow it in call order.

        ``as_repaired``: as the repair pass would leave it (every call answered but those
        of the parked reply ``keep``), without writing anything. ``hidden``: spans
        ``(from, until)`` of messages left out, each reply with its answers (a rewound
        conversation).
        """
        end = until if until is not None else 2**62
        calls: dict[int, list[sqlite3.Row]] = {}
        for row in self._db.execute(
            "SELECT * FROM tool_calls WHERE session_id = ? AND message_seq >= ?"
            " AND message_seq < ? ORDER BY message_seq, idx",
            (session, since, end),
        ):
            calls.setdefault(row["message_seq"], []).append(row)
        messages: list[Message] = []
        for row in self._db.execute(
            "SELECT seq, role, content FROM messages WHERE session_id = ? AND seq >= ?"
            " AND seq < ? ORDER BY seq",
            (session, since, end),
        ):
            if any(start <= row["seq"] < until for start, until in hidden):
                continue
            if row["role"] == "user":
                messages.append(UserMessage(content=row["content"]))
                continue
            rows = calls.get(row["seq"], [])
            messages.append(
                AssistantMessage(content=row["content"], tool_calls=tuple(map(_call, rows)))
            )
            repairs = as_repaired and row["seq"] != keep
            messages.extend(
                ToolMessage(result=_result(r) if r["status"] else _repaired(r))
                for r in rows
                if r["status"] or repairs
            )
        return messages

    def next_seq(self, session: str) -> int:
        """The seq the next message will have."""
        (last,) = self._db.execute(
            "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE session_id = ?", (session,)
        ).fetchone()
        return int(last) + 1

    def first_unanswered(self, session: str, since: int = 0) -> int | None:
        """The seq of the first reply (at ``since`` or later) with a call not answered yet;
        None when every call is answered. Messages before it can no longer change."""
        (seq,) = self._db.execute(
            "SELECT MIN(message_seq) FROM tool_calls"
            " WHERE session_id = ? AND message_seq >= ? AND status IS NULL",
            (session, since),
        ).fetchone()
        return None if seq is None else int(seq)

    def seqs(self, session: str, role: str) -> list[int]:
        rows = self._db.execute(
            "SELECT seq FROM messages WHERE session_id = ? AND role = ? ORDER BY seq",
            (session, role),
        )
        return [row[0] for row in rows]

    def last_usage(self, session: str) -> tuple[int, int] | None:
        """The newest reply's (seq, tokens in and out): how big the context was then."""
        row = self._db.execute(
            "SELECT seq, input_tokens + output_tokens FROM messages WHERE session_id = ?"
            " AND role = 'assistant' AND input_tokens IS NOT NULL ORDER BY seq DESC LIMIT 1",
            (session,),
        ).fetchone()
        return (row[0], row[1]) if row else None

    def stats(self, session: str) -> Stats:
        return session_stats(self._db, session)


def repair_status(row: sqlite3.Row) -> ToolStatus:
    return "interrupted" if row["started_at"] else "cancelled"


def _call(row: sqlite3.Row) -> ToolCall:
    return ToolCall(id=row["call_id"], name=row["name"], arguments=row["arguments"])


def _result(row: sqlite3.Row) -> ToolResult:
    return ToolResult(
        call_id=row["call_id"],
        tool=row["name"],
        status=row["status"],
        content=row["content"] or "",
        started_at=parse_iso(row["started_at"]),
        ended_at=parse_iso(row["ended_at"]),
        reason=row["reason"],
        decided_by=row["decided_by"],
    )


def _repaired(row: sqlite3.Row) -> ToolResult:
    """The answer the repair pass gives an unanswered call, without writing it."""
    status = repair_status(row)
    return ToolResult(
        call_id=row["call_id"],
        tool=row["name"],
        status=status,
        content=REPAIRED_CONTENT[status],
        started_at=parse_iso(row["started_at"]),
        reason=REPAIR_REASON,
        decided_by="repair",
    )
