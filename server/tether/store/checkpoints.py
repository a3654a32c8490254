"""Checkpoints and rewinds: what a turn changed, and what a person took back.

A checkpoint row is one turn's: in a git workspace the commit of the workspace before its
first change and the one when it ended (their objects live in the workspace's own
repository, kept alive by a ref); outside git, the before- and after-images of the files
its patches touched (``checkpoint_files``). A rewind row records what a rewind did, and
(for ``conversation`` / ``both``) which messages the model is no longer sent: the store
keeps every message, as with compaction.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime

from tether.models import Frozen, RewindWhat, iso, now
from tether.store.schema import transaction


class TurnCheckpoint(Frozen):
    session: str
    turn: int
    before: str | None  # git: the commit before the turn's first change; None outside git
    after: str | None  # git: the commit when the turn ended; None until it ends
    files: list[str]  # what the turn changed (known when it ends)
    skipped: list[str]  # files too large to be kept
    commands: int  # commands the turn ran (outside git their effects cannot be taken back)
    created: str
    ended: str | None


class FileImage(Frozen):
    """Outside git: one file as it was before the turn's first patch of it, and after."""

    path: str  # relative to the workspace
    before: bytes | None  # None: it did not exist
    after: bytes | None
    after_known: bool


class RewindRecord(Frozen):
    turn: int
    what: RewindWhat
    from_seq: int  # conversation: messages from_seq <= seq < until_seq are no longer sent
    until_seq: int
    report: str  # the rewind's result, as JSON
    created: str


class Checkpoints:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def begin(self, session: str, turn: int, before: str | None, skipped: list[str]) -> bool:
        """Record the turn's checkpoint before its first change; False: it has one."""
        return bool(
            self._db.execute(
                "INSERT OR IGNORE INTO checkpoints (session_id, turn, before, skipped, commands,"
                " files, created) VALUES (?, ?, ?, ?, 0, '[]', ?)",
                (session, turn, before, json.dumps(skipped), iso(now())),
            ).rowcount
        )

    def ran_command(self, session: str, turn: int) -> None:
        self._db.execute(
            "UPDATE checkpoints SET commands = commands + 1 WHERE session_id = ? AND turn = ?",
            (session, turn),
        )

    def end(
        self, session: str, turn: int, after: str | None, files: list[str], skipped: list[str]
    ) -> None:
        self._db.execute(
            "UPDATE checkpoints SET after = ?, files = ?, ended = ?,"
            " skipped = (SELECT json_group_array(value) FROM"
            "  (SELECT value FROM json_each(skipped) UNION SELECT value FROM json_each(?)))"
            " WHERE session_id = ? AND turn = ?",
            (after, json.dumps(files), iso(now()), json.dumps(skipped), session, turn),
        )

    def get(self, session: str, turn: int) -> TurnCheckpoint | None:
        row = self._db.execute(
            "SELECT * FROM checkpoints WHERE session_id = ? AND turn = ?", (session, turn)
        ).fetchone()
        return _checkpoint(row) if row else None

    def listed(self, session: str) -> list[TurnCheckpoint]:
        rows = self._db.execute(
            "SELECT * FROM checkpoints WHERE session_id = ? ORDER BY turn", (session,)
        )
        return [_checkpoint(row) for row in rows]

    def older_than(self, moment: datetime) -> list[TurnCheckpoint]:
        rows = self._db.execute("SELECT * FROM checkpoints WHERE created < ?", (iso(moment),))
        return [_checkpoint(row) for row in rows]

    def remove(self, session: str, turn: int) -> None:
        with transaction(self._db) as db:
            for table in ("checkpoint_files", "checkpoints"):
                db.execute(
                    f"DELETE FROM {table} WHERE session_id = ? AND turn = ?", (session, turn)
                )

    # -- outside git: the files the turn's patches touched ----------------------------

    def keep_before(self, session: str, turn: int, path: str, before: bytes | None) -> None:
        """The file before the turn's first patch of it; a later patch keeps the first."""
        self._db.execute(
            "INSERT OR IGNORE INTO checkpoint_files (session_id, turn, path, before)"
            " VALUES (?, ?, ?, ?)",
            (session, turn, path, before),
        )

    def keep_after(self, session: str, turn: int, path: str, after: bytes | None) -> None:
        self._db.execute(
            "UPDATE checkpoint_files SET after = ?, after_known = 1"
            " WHERE session_id = ? AND turn = ? AND path = ?",
            (after, session, turn, path),
        )

    def images(self, session: str, turn: int) -> list[FileImage]:
        rows = self._db.execute(
            "SELECT path, before, after, after_known FROM checkpoint_files"
            " WHERE session_id = ? AND turn = ? ORDER BY path",
            (session, turn),
        )
        return [
            FileImage(
                path=r["path"],
                before=r["before"],
                after=r["after"],
                after_known=bool(r["after_known"]),
            )
            for r in rows
        ]

    # -- rewinds --------------------------------------------------------------------------

    def add_rewind(
        self, session: str, turn: int, what: RewindWhat, span: tuple[int, int], report: str
    ) -> None:
        self._db.execute(
            "INSERT INTO rewinds (session_id, turn, what, from_seq, until_seq, report, created)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (session, turn, what, span[0], span[1], report, iso(now())),
        )

    def rewinds(self, session: str) -> list[RewindRecord]:
        rows = self._db.execute(
            "SELECT turn, what, from_seq, until_seq, report, created FROM rewinds"
            " WHERE session_id = ? ORDER BY rowid",
            (session,),
        )
        return [RewindRecord.model_validate(dict(row)) for row in rows]

    def hidden(self, session: str) -> list[tuple[int, int]]:
        """The spans of messages a conversation rewind took out of what the model is sent."""
        return [
            (r.from_seq, r.until_seq)
            for r in self.rewinds(session)
            if r.what != "files" and r.from_seq < r.until_seq
        ]


def _checkpoint(row: sqlite3.Row) -> TurnCheckpoint:
    return TurnCheckpoint(
        session=row["session_id"],
        turn=row["turn"],
        before=row["before"],
        after=row["after"],
        files=json.loads(row["files"]),
        skipped=json.loads(row["skipped"]),
        commands=row["commands"],
        created=row["created"],
        ended=row["ended"],
    )
