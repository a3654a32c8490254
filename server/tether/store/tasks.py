"""Scheduled tasks: a prompt run every so often, kept across restarts."""

from __future__ import annotations

import re
import sqlite3
import uuid
from datetime import datetime, timedelta

from tether.errors import RequestError
from tether.models import Task, iso, now, parse_iso

UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_every(every: str) -> float:
    """ "30m", "6h", "1d", "90s" as seconds."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd])\s*", every)
    if not match or float(match[1]) <= 0:
        raise RequestError(
            f"invalid every {every!r}: give a number and a unit, as 30m, 6h, 1d or 90s"
        )
    return float(match[1]) * UNITS[match[2]]


class Tasks:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def add(self, workspace: str, prompt: str, every: str, session: str | None) -> Task:
        seconds = parse_every(every)
        task = uuid.uuid4().hex[:10]
        self._db.execute(
            "INSERT INTO tasks (id, workspace, prompt, every, every_s, session, next_run)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                task,
                workspace,
                prompt,
                every.strip(),
                seconds,
                session,
                iso(now() + timedelta(seconds=seconds)),
            ),
        )
        return self.get(task)

    def get(self, task: str) -> Task:
        row = self._db.execute("SELECT * FROM tasks WHERE id = ?", (task,)).fetchone()
        if row is None:
            raise RequestError(f"unknown task {task!r}")
        return _task(row)

    def remove(self, task: str) -> None:
        if self._db.execute("DELETE FROM tasks WHERE id = ?", (task,)).rowcount == 0:
            raise RequestError(f"unknown task {task!r}")

    def listed(self, workspace: str) -> list[Task]:
        rows = self._db.execute(
            "SELECT * FROM tasks WHERE workspace = ? ORDER BY next_run", (workspace,)
        )
        return [_task(row) for row in rows]

    def claim_due(self, workspace: str, moment: datetime) -> list[Task]:
        """The tasks due now, each moved to its next slot from now: however many slots
        passed while no server ran, a task runs once."""
        due = []
        for row in self._db.execute(
            "SELECT * FROM tasks WHERE workspace = ? AND next_run <= ?", (workspace, iso(moment))
        ).fetchall():
            following = moment + timedelta(seconds=row["every_s"])
            # Claimed only if no other server sharing this store moved it first.
            claimed = self._db.execute(
                "UPDATE tasks SET next_run = ?, last_run = ? WHERE id = ? AND next_run = ?",
                (iso(following), iso(moment), row["id"], row["next_run"]),
            ).rowcount
            if claimed:
                due.append(_task(row))
        return due

    def next_due(self, workspace: str) -> datetime | None:
        row = self._db.execute(
            "SELECT MIN(next_run) FROM tasks WHERE workspace = ?", (workspace,)
        ).fetchone()
        return parse_iso(row[0])

    def finished(self, task: str, status: str, session: str) -> None:
        self._db.execute(
            "UPDATE tasks SET last_status = ?, last_session = ? WHERE id = ?",
            (status, session, task),
        )


def _task(row: sqlite3.Row) -> Task:
    fields = (
        "id",
        "prompt",
        "every",
        "session",
        "next_run",
        "last_run",
        "last_status",
        "last_session",
    )
    return Task.model_validate({key: row[key] for key in fields})
