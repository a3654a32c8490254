"""A session's transcript in SQLite: crash-safe by the order of writes.

A reply and its calls are written in one transaction before any call runs; a
call is marked started before it runs; its result is committed the moment it
ends. A result is a column of its call's row, so a result that answers no call
cannot exist, and a call with no result is visible as such. On load, the
repair pass answers every call that has none (``interrupted`` where it had
started, ``cancelled`` where it had not), so the next request is well formed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import datetime

from tether.models import (
    AssistantMessage,
    Frozen,
    Message,
    RecordedChoice,
    Reply,
    SessionInfo,
    Stats,
    ToolCall,
    ToolMessage,
    ToolResult,
    ToolStatus,
    UserMessage,
    iso,
    now,
    parse_iso,
)
from tether.outbound import outbound
from tether.store.schema import transaction
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


class Transcript:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def append_user(self, session: str, content: str) -> int:
        with transaction(self._db) as db:
            return _append_message(db, session, "user", outbound(content))

    def append_reply(self, session: str, reply: Reply) -> StoredReply:
        """Store the reply and its calls, unanswered, in one transaction."""
        reply = _kept(reply)
        with transaction(self._db) as db:
            seq = _append_message(db, session, "assistant", reply.text)
            if reply.usage is not None:
                db.execute(
                    "UPDATE messages SET input_tokens = ?, output_tokens = ?"
                    " WHERE session_id = ? AND seq = ?",
                    (reply.usage.input_tokens, reply.usage.output_tokens, session, seq),
                )
            db.executemany(
                "INSERT INTO tool_calls (session_id, message_seq, idx, call_id, name, arguments)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (session, seq, idx, call.id, call.name, call.arguments)
                    for idx, call in enumerate(reply.tool_calls)
                ],
            )
        return StoredReply(session=session, seq=seq, calls=reply.tool_calls)

    def mark_started(self, session: str, seq: int, idx: int, at: datetime) -> None:
        self._db.execute(
            "UPDATE tool_calls SET started_at = ?"
            " WHERE session_id = ? AND message_seq = ? AND idx = ?",
            (iso(at), session, seq, idx),
        )

    def record_result(self, session: str, seq: int, idx: int, result: ToolResult) -> bool:
        """Commit one call's answer. A call is answered once: a second answer is ignored
        (False)."""
        return bool(
            self._db.execute(
                "UPDATE tool_calls SET status = ?, content = ?, started_at = ?, ended_at = ?,"
                " reason = ?, decided_by = ?, sandboxed = ?"
                " WHERE session_id = ? AND message_seq = ? AND idx = ? AND status IS NULL",
                (
                    result.status,
                    outbound(result.content),
                    iso(result.started_at),
                    iso(result.ended_at),
                    result.reason,
                    result.decided_by,
                    result.sandboxed,
                    session,
                    seq,
                    idx,
                ),
            ).rowcount
        )

    def record_choice(self, session: str, seq: int, idx: int, choice: RecordedChoice) -> None:
        """A person's decision on a call that waits; it is read when the reply resumes."""
        self._db.execute(
            "UPDATE tool_calls SET decision = ?, decision_reason = ?"
            " WHERE session_id = ? AND message_seq = ? AND idx = ? AND status IS NULL",
            (choice.decision, outbound(choice.reason or "") or None, session, seq, idx),
        )

    def repair(
        self, session: str, keep: int | None = None, seen: SessionInfo | None = None
    ) -> int | None:
        """Answer every call that has no result, except those of the parked reply ``keep``.

        With ``seen``, only while the session's row is still as seen (its status and owner):
        None, and nothing written, when another process has claimed it since."""
        with transaction(self._db) as db:
            if seen is not None:
                now_is = db.execute(
                    "SELECT status, owner FROM sessions WHERE id = ?", (session,)
                ).fetchone()
                if now_is is None or tuple(now_is) != (seen.status, seen.owner):
                    return None
            rows = db.execute(
                "SELECT message_seq, idx, started_at FROM tool_calls"
                " WHERE session_id = ? AND status IS NULL AND message_seq IS NOT ?",
                (session, keep),
            ).fetchall()
            for row in rows:
                status = _repair_status(row)
                db.execute(
                    "UPDATE tool_calls SET status = ?, content = ?, reason = ?,"
                    " decided_by = 'repair'"
                    " WHERE session_id = ? AND message_seq = ? AND idx = ?",
                    (status, REPAIRED_CONTENT[status], REPAIR_REASON, session, *row[:2]),
                )
            return len(rows)

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


def _kept(reply: Reply) -> Reply:
    """A reply as it may be kept: text no SQLite column refuses and no secret."""
    calls = tuple(
        call.model_copy(
            update={
                "id": outbound(call.id),
                "name": outbound(call.name),
                "arguments": outbound(call.arguments),
            }
        )
        for call in reply.tool_calls
    )
    return reply.model_copy(update={"text": outbound(reply.text), "tool_calls": calls})


def _append_message(db: sqlite3.Connection, session: str, role: str, text: str) -> int:
    (last,) = db.execute(
        "SELECT COALESCE(MAX(seq), -1) FROM messages WHERE session_id = ?", (session,)
    ).fetchone()
    stamp = iso(now())
    db.execute(
        "INSERT INTO messages (session_id, seq, role, content, created) VALUES (?, ?, ?, ?, ?)",
        (session, last + 1, role, text, stamp),
    )
    db.execute("UPDATE sessions SET updated = ? WHERE id = ?", (stamp, session))
    return int(last) + 1


def _repair_status(row: sqlite3.Row) -> ToolStatus:
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
    status = _repair_status(row)
    return ToolResult(
        call_id=row["call_id"],
        tool=row["name"],
        status=status,
        content=REPAIRED_CONTENT[status],
        started_at=parse_iso(row["started_at"]),
        reason=REPAIR_REASON,
        decided_by="repair",
    )
