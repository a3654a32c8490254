"""Scheduled tasks: a prompt run every so often, kept across restarts."""

from __future__ import annotations

import sqlite3
import uuid
from datetime import datetime, timedelta

from tether.errors import NotFound
from tether.models import Task, iso, now, parse_iso


class Tasks:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def add(
        self, workspace: str, prompt: str, every: str, seconds: float, session: str | None
    ) -> Task:
        """``every`` as the person wrote it ("30m"), ``seconds`` as it was understood."""
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
            raise NotFound(f"unknown task {task!r}")
        return _task(row)

    def remove(self, task: str) -> None:
        if self._db.execute("DELETE FROM tasks WHERE id = ?", (task,)).rowcount == 0:
            raise NotFound(f"unknown task {task!r}")

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
