"""Sessions in SQLite: crash-safe by the order of writes.

A reply and its calls are written in one transaction before any call runs; a
call is marked started before it runs; its result is committed the moment it
ends. A result is a column of its call's row, so a result that answers no call
cannot exist, and a call with no result is visible as such. On load, the
repair pass answers every call that has none (``interrupted`` where it had
started, ``cancelled`` where it had not), so the next request is well formed.
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from tether.errors import UnknownSession
from tether.models import (
    AssistantMessage,
    Frozen,
    Message,
    RecordedDecision,
    Reply,
    SessionInfo,
    Stats,
    ToolCall,
    ToolMessage,
    ToolResult,
    UserMessage,
    iso,
    now,
    parse_iso,
)
from tether.store.compactions import Compactions
from tether.store.rules import RuleBook
from tether.store.schema import connect
from tether.store.stats import session_stats
from tether.store.tasks import Tasks

REPAIR_REASON = "unanswered_tool_call_repair"
REPAIRED_CONTENT = {
    "interrupted": (
        "interrupted: this call had started when tether stopped, and it never finished. "
        "It may have had effects; check before repeating it."
    ),
    "cancelled": (
        "cancelled: this call never started (tether stopped first). Nothing was run; "
        "call it again if you still need it."
    ),
}


class Parked(Frozen):
    """A reply whose remaining calls wait, mostly for a person's decision."""

    seq: int
    calls: tuple[ToolCall, ...]
    answered: frozenset[int]
    decisions: dict[str, tuple[RecordedDecision | None, str | None]]


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path)
        self.rules = RuleBook(self._db)
        self.compactions = Compactions(self._db)
        self.tasks = Tasks(self._db)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- sessions ---------------------------------------------------------------

    def create_session(self, workspace: Path, title: str) -> str:
        session = uuid.uuid4().hex[:12]
        stamp = iso(now())
        title = " ".join(title.split())[:80] or "untitled"
        self._db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, 'idle', ?, ?, NULL)",
            (session, str(workspace), title, stamp, stamp),
        )
        return session

    def session(self, session: str) -> SessionInfo:
        row = self._db.execute("SELECT * FROM sessions WHERE id = ?", (session,)).fetchone()
        if row is None:
            raise UnknownSession(session)
        return _session_info(row)

    def sessions(self, workspace: Path | None = None) -> list[SessionInfo]:
        query = "SELECT * FROM sessions"
        args: tuple[str, ...] = ()
        if workspace is not None:
            query += " WHERE workspace = ?"
            args = (str(workspace),)
        rows = self._db.execute(query + " ORDER BY updated DESC", args).fetchall()
        return [_session_info(row) for row in rows]

    def set_status(self, session: str, status: str, owner: int | None = None) -> None:
        """``owner``: the process running the session's turn, while it runs."""
        self._db.execute(
            "UPDATE sessions SET status = ?, owner = ?, updated = ? WHERE id = ?",
            (status, owner, iso(now()), session),
        )

    # -- the transcript ---------------------------------------------------------

    def append_user(self, session: str, content: str) -> int:
        with self._transaction() as db:
            return self._append_message(db, session, "user", content)

    def append_reply(self, session: str, reply: Reply) -> int:
        """Store the reply and its calls, unanswered, in one transaction."""
        with self._transaction() as db:
            seq = self._append_message(db, session, "assistant", reply.text)
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
            return seq

    def _append_message(self, db: sqlite3.Connection, session: str, role: str, text: str) -> int:
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

    def mark_started(self, session: str, seq: int, idx: int, at: datetime) -> None:
        self._db.execute(
            "UPDATE tool_calls SET started_at = ?"
            " WHERE session_id = ? AND message_seq = ? AND idx = ?",
            (iso(at), session, seq, idx),
        )

    def record_result(self, session: str, seq: int, idx: int, result: ToolResult) -> None:
        """Commit one call's answer. A call is answered once: a second answer is ignored."""
        self._db.execute(
            "UPDATE tool_calls SET status = ?, content = ?, started_at = ?, ended_at = ?,"
            " reason = ?, decided_by = ?"
            " WHERE session_id = ? AND message_seq = ? AND idx = ? AND status IS NULL",
            (
                result.status,
                result.content,
                iso(result.started_at),
                iso(result.ended_at),
                result.reason,
                result.decided_by,
                session,
                seq,
                idx,
            ),
        )

    def repair(self, session: str, keep: int | None = None) -> int:
        """Answer every call that has no result, except those of the parked reply ``keep``."""
        with self._transaction() as db:
            rows = db.execute(
                "SELECT message_seq, idx, started_at FROM tool_calls"
                " WHERE session_id = ? AND status IS NULL AND message_seq IS NOT ?",
                (session, keep),
            ).fetchall()
            for row in rows:
                status = "interrupted" if row["started_at"] else "cancelled"
                db.execute(
                    "UPDATE tool_calls SET status = ?, content = ?, reason = ?,"
                    " decided_by = 'repair'"
                    " WHERE session_id = ? AND message_seq = ? AND idx = ?",
                    (status, REPAIRED_CONTENT[status], REPAIR_REASON, session, *row[:2]),
                )
            return len(rows)

    # -- parked replies and decisions -------------------------------------------

    def parked(self, session: str) -> Parked | None:
        """The last reply, when some of its calls still wait for an answer."""
        row = self._db.execute(
            "SELECT MAX(seq) FROM messages WHERE session_id = ? AND role = 'assistant'",
            (session,),
        ).fetchone()
        if row[0] is None:
            return None
        rows = self._db.execute(
            "SELECT * FROM tool_calls WHERE session_id = ? AND message_seq = ? ORDER BY idx",
            (session, row[0]),
        ).fetchall()
        if all(r["status"] for r in rows):
            return None
        return Parked(
            seq=row[0],
            calls=tuple(map(_call, rows)),
            answered=frozenset(r["idx"] for r in rows if r["status"]),
            decisions={r["call_id"]: (r["decision"], r["decision_reason"]) for r in rows},
        )

    def decide(
        self,
        session: str,
        seq: int,
        call_id: str,
        decision: RecordedDecision,
        reason: str | None,
    ) -> None:
        self._db.execute(
            "UPDATE tool_calls SET decision = ?, decision_reason = ?"
            " WHERE session_id = ? AND message_seq = ? AND call_id = ? AND status IS NULL",
            (decision, reason, session, seq, call_id),
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

    def load(self, session: str, since: int = 0, until: int | None = None) -> list[Message]:
        """The transcript in order (messages ``since`` <= seq < ``until``); each reply's
        answers follow it in call order."""
        self.session(session)
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
            if row["role"] == "user":
                messages.append(UserMessage(content=row["content"]))
                continue
            rows = calls.get(row["seq"], [])
            messages.append(
                AssistantMessage(content=row["content"], tool_calls=tuple(map(_call, rows)))
            )
            messages.extend(ToolMessage(result=_result(r)) for r in rows if r["status"])
        return messages

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


def _session_info(row: sqlite3.Row) -> SessionInfo:
    return SessionInfo(
        id=row["id"],
        title=row["title"],
        status=row["status"],
        updated=row["updated"],
        workspace=row["workspace"],
        owner=row["owner"],
    )


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
