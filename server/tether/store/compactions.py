"""Compactions: what a session's context is rebuilt from. The transcript itself is never cut."""

from __future__ import annotations

import sqlite3

from tether.models import Frozen, iso, now


class Summary(Frozen):
    upto_seq: int  # messages before this seq are summarised
    at_seq: int  # the newest message when it was made
    summary: str
    created: str


class Compactions:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def add(self, session: str, upto_seq: int, at_seq: int, summary: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO compactions VALUES (?, ?, ?, ?, ?)",
            (session, upto_seq, at_seq, summary, iso(now())),
        )

    def latest(self, session: str) -> Summary | None:
        listed = self.listed(session)
        return listed[-1] if listed else None

    def listed(self, session: str) -> list[Summary]:
        rows = self._db.execute(
            "SELECT upto_seq, at_seq, summary, created FROM compactions"
            " WHERE session_id = ? ORDER BY at_seq",
            (session,),
        )
        return [Summary.model_validate(dict(row)) for row in rows]
