"""Sessions: their titles, statuses, and which process runs a turn on each.

Several tether processes may share one store (two editor windows, ``tether ask``
beside them). A turn starts only by claiming its session with one conditional
``UPDATE`` that holds only if the row is still as the claimant saw it, so exactly
one process wins a race (as ``Tasks.claim_due`` does for scheduled tasks).
"""

from __future__ import annotations

import sqlite3
import uuid
from pathlib import Path

from tether.errors import NotFound
from tether.models import SessionInfo, SessionStatus, iso, now


class Sessions:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def create(self, workspace: Path, title: str) -> str:
        session = uuid.uuid4().hex[:12]
        stamp = iso(now())
        title = " ".join(title.split())[:80] or "untitled"
        self._db.execute(
            "INSERT INTO sessions VALUES (?, ?, ?, 'idle', ?, ?, NULL)",
            (session, str(workspace), title, stamp, stamp),
        )
        return session

    def retitle(self, session: str, title: str) -> None:
        """Title an untitled session (one made before its first prompt) by ``title``."""
        title = " ".join(title.split())[:80] or "untitled"
        self._db.execute(
            "UPDATE sessions SET title = ? WHERE id = ? AND title = 'untitled'", (title, session)
        )

    def get(self, session: str) -> SessionInfo:
        row = self._db.execute("SELECT * FROM sessions WHERE id = ?", (session,)).fetchone()
        if row is None:
            raise NotFound.session(session)
        return _session_info(row)

    def listed(self, workspace: Path | None = None) -> list[SessionInfo]:
        query = "SELECT * FROM sessions"
        args: tuple[str, ...] = ()
        if workspace is not None:
            query += " WHERE workspace = ?"
            args = (str(workspace),)
        rows = self._db.execute(query + " ORDER BY updated DESC", args).fetchall()
        return [_session_info(row) for row in rows]

    def set_status(self, session: str, status: SessionStatus) -> None:
        """A turn's end (or a repair): nobody runs the session any more."""
        self._db.execute(
            "UPDATE sessions SET status = ?, owner = NULL, updated = ? WHERE id = ?",
            (status, iso(now()), session),
        )

    def claim(self, seen: SessionInfo, status: SessionStatus, owner: int | None = None) -> bool:
        """Move the session from ``seen`` to ``status`` (run by ``owner``), only if no other
        process changed it since it was seen. False: someone else got there first."""
        changed = self._db.execute(
            "UPDATE sessions SET status = ?, owner = ?, updated = ?"
            " WHERE id = ? AND status = ? AND owner IS ?",
            (status, owner, iso(now()), seen.id, seen.status, seen.owner),
        ).rowcount
        return bool(changed)


def _session_info(row: sqlite3.Row) -> SessionInfo:
    return SessionInfo(
        id=row["id"],
        title=row["title"],
        status=row["status"],
        updated=row["updated"],
        workspace=row["workspace"],
        owner=row["owner"],
    )
