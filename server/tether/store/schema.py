"""The database: one SQLite file, WAL, explicit transactions."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL,
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    created TEXT NOT NULL,
    updated TEXT NOT NULL,
    owner INTEGER
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    seq INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content TEXT NOT NULL,
    created TEXT NOT NULL,
    input_tokens INTEGER,
    output_tokens INTEGER,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE IF NOT EXISTS tool_calls (
    session_id TEXT NOT NULL,
    message_seq INTEGER NOT NULL,
    idx INTEGER NOT NULL,
    call_id TEXT NOT NULL,
    name TEXT NOT NULL,
    arguments TEXT NOT NULL,
    status TEXT,
    content TEXT,
    started_at TEXT,
    ended_at TEXT,
    reason TEXT,
    decided_by TEXT,
    decision TEXT CHECK (decision IN ('allow', 'deny', 'dismissed', 'applied')),
    decision_reason TEXT,
    sandboxed INTEGER,
    PRIMARY KEY (session_id, message_seq, idx),
    FOREIGN KEY (session_id, message_seq) REFERENCES messages(session_id, seq)
);
CREATE TABLE IF NOT EXISTS compactions (
    session_id TEXT NOT NULL REFERENCES sessions(id),
    upto_seq INTEGER NOT NULL,
    at_seq INTEGER NOT NULL,
    summary TEXT NOT NULL,
    created TEXT NOT NULL,
    PRIMARY KEY (session_id, at_seq)
);
CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    workspace TEXT NOT NULL,
    prompt TEXT NOT NULL,
    every TEXT NOT NULL,
    every_s REAL NOT NULL,
    session TEXT,
    next_run TEXT NOT NULL,
    last_run TEXT,
    last_status TEXT,
    last_session TEXT
);
CREATE TABLE IF NOT EXISTS rules (
    id INTEGER PRIMARY KEY,
    scope TEXT NOT NULL CHECK (scope IN ('session', 'workspace')),
    scope_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    key TEXT NOT NULL,
    words TEXT NOT NULL,
    created TEXT NOT NULL,
    verdict TEXT NOT NULL DEFAULT 'allow' CHECK (verdict IN ('allow', 'deny')),
    UNIQUE (scope, scope_id, tool, key)
);
CREATE TABLE IF NOT EXISTS checkpoints (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    before TEXT,
    after TEXT,
    files TEXT NOT NULL,
    skipped TEXT NOT NULL,
    commands INTEGER NOT NULL,
    created TEXT NOT NULL,
    ended TEXT,
    PRIMARY KEY (session_id, turn)
);
CREATE TABLE IF NOT EXISTS checkpoint_files (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    path TEXT NOT NULL,
    before BLOB,
    after BLOB,
    after_known INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, turn, path)
);
CREATE TABLE IF NOT EXISTS rewinds (
    session_id TEXT NOT NULL,
    turn INTEGER NOT NULL,
    what TEXT NOT NULL CHECK (what IN ('files', 'conversation', 'both')),
    from_seq INTEGER NOT NULL,
    until_seq INTEGER NOT NULL,
    report TEXT NOT NULL,
    created TEXT NOT NULL
);
"""


def connect(path: Path) -> sqlite3.Connection:
    path.parent.mkdir(parents=True, exist_ok=True)
    # isolation_level=None: transactions are explicit, each write commits at once.
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    db.row_factory = sqlite3.Row
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("PRAGMA foreign_keys=ON")
    db.execute("PRAGMA busy_timeout=5000")
    db.executescript(SCHEMA)
    _add_missing_columns(db)
    return db


def _add_missing_columns(db: sqlite3.Connection) -> None:
    """A store made by an earlier tether gains the columns added since; nothing is lost."""
    for table, column, kind in ADDED_COLUMNS:
        present = {row["name"] for row in db.execute(f"PRAGMA table_info({table})")}
        if column not in present:
            db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")


ADDED_COLUMNS = [
    ("sessions", "owner", "INTEGER"),
    ("messages", "input_tokens", "INTEGER"),
    ("messages", "output_tokens", "INTEGER"),
    ("tool_calls", "decision", "TEXT"),
    ("tool_calls", "decision_reason", "TEXT"),
    ("tool_calls", "sandboxed", "INTEGER"),
    # Rules that deny came later: every rule of an earlier store allowed.
    ("rules", "verdict", "TEXT NOT NULL DEFAULT 'allow' CHECK (verdict IN ('allow', 'deny'))"),
]


@contextmanager
def transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """One write transaction, taken at once (``IMMEDIATE``), so it never fails half-way on
    a lock another process holds: it waits up to ``busy_timeout`` before it starts."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")
