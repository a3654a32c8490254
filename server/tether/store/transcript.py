"""A session's transcript in SQLite: crash-safe by the order of writes.

A reply and its calls are written in one transaction before any call runs; a
call is marked started before it runs; its result is committed the moment it
ends. A result is a column of its call's row, so a result that answers no call
cannot exist, and a call with no result is visible as such. On load, the
repair pass answers every call that has none (``interrupted`` where it had
started, ``cancelled`` where it had not), so the next request is well formed.

Reading it back, and how an unanswered call reads once repaired, is
``transcript_reads.py``.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime

from tether.models import RecordedChoice, Reply, SessionInfo, ToolResult, iso, now
from tether.outbound import outbound
from tether.store.schema import transaction
from tether.store.transcript_reads import (
    REPAIR_REASON,
    REPAIRED_CONTENT,
    StoredReply,
    TranscriptReads,
    repair_status,
)


class Transcript(TranscriptReads):
    """The transcript's writes, on top of its reads (``transcript_reads.py``)."""

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
                status = repair_status(row)
                db.execute(
                    "UPDATE tool_calls SET status = ?, content = ?, reason = ?,"
                    " decided_by = 'repair'"
                    " WHERE session_id = ? AND message_seq = ? AND idx = ?",
                    (status, REPAIRED_CONTENT[status], REPAIR_REASON, session, *row[:2]),
                )
            return len(rows)


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
