"""The shards of an index: files beside its database, each holding a ``grams`` table that
one worker of a long pass writes while the others write theirs.

An FTS5 insert is a first build's longest part, and one database takes one writer at a
time: two shards written side by side took 3.6 and 3.8 s where one took 7.2. The shards
are attached to the database's connection (as ``g0``, ``g1``, ...) and a search asks every
``grams`` table. The database names the set (``of``, a random name) and how many there
are; a connection follows what is named (``Attached.follow``), so a second server of the
same index attaches the shards the first one's workers wrote, and lets go of a set that
was started afresh.
"""

from __future__ import annotations

import contextlib
import glob
import sqlite3
from collections.abc import Sequence
from pathlib import Path

# Every grams table's: a document's tokens are its trigrams (``trigrams``), "_" a letter.
GRAMS = "fts5(body, tokenize=\"ascii tokenchars '_'\", content='', detail='none')"
# What FTS5 gathers in memory before it writes a segment (1 MiB unless told): a worker's
# batch (``workspace.WORKER_BATCH``) is written as one segment, not several. Insert CPU,
# 9,944 files of the bench's big tree: 71 µs a file in batches of 400 (each under 1 MiB),
# 64 in batches of 800, 55 in batches of 800 with this; larger ones took longer.
HASH_BYTES = 8 * 2**20


def path_of(database: Path, of: str, n: int) -> Path:
    return database.with_name(f"{database.name}.grams-{of}-{n}")


def files(database: Path) -> list[Path]:
    """The shards of the database at ``database`` on disk (with their WAL files)."""
    return sorted(database.parent.glob(f"{glob.escape(database.name)}.grams*"))


def remove(database: Path) -> None:
    """Delete the shards of the database at ``database``, as far as the system lets."""
    for shard in files(database):
        with contextlib.suppress(OSError):  # Windows: another server holds it open
            shard.unlink()


def write(shard: Path, documents: Sequence[tuple[int, str]]) -> None:
    """Insert ``documents`` (id, text) into the shard at ``shard``, in one transaction of
    its own connection (a worker's)."""
    db = sqlite3.connect(shard, isolation_level=None, timeout=60)
    try:
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO grams(rowid, body) VALUES (?, ?)", documents)
        db.execute("COMMIT")
    finally:
        db.close()


class Attached:
    """The shards attached to one connection, and the set they are of."""

    def __init__(self, db: sqlite3.Connection, database: Path) -> None:
        self.db, self.database = db, database
        self.count = 0
        self.of: str | None = None

    def follow(self, of: str | None, count: int) -> None:
        """Attach the shards named: more of the same set, or another set altogether."""
        if of != self.of:
            self.detach()
            self.of = of
        while of is not None and self.count < count:
            name = f"g{self.count}"
            self.db.execute(f"ATTACH ? AS {name}", (str(path_of(self.database, of, self.count)),))
            self.db.execute(f"PRAGMA {name}.journal_mode=WAL")
            made = self.db.execute(f"SELECT 1 FROM {name}.sqlite_master WHERE name = 'grams'")
            if made.fetchone() is None:
                self.db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {name}.grams USING {GRAMS}")
                # Written by a long pass only, never rewritten: merging its segments as
                # they come was a fifth of the writes, and searched no faster after.
                self.db.execute(f"INSERT INTO {name}.grams(grams, rank) VALUES ('automerge', 0)")
                self.db.execute(
                    f"INSERT INTO {name}.grams(grams, rank) VALUES ('hashsize', ?)", (HASH_BYTES,)
                )
            self.count += 1

    def detach(self) -> None:
        while self.count:
            self.count -= 1
            self.db.execute(f"DETACH g{self.count}")
        self.of = None

    def schemas(self) -> list[str]:
        """Where a ``grams`` table is: the database itself and each shard."""
        return ["main", *(f"g{n}" for n in range(self.count))]
