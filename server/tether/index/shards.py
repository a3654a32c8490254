"""The shards of an index: files beside its database, each holding a ``postings`` table
(``postings``) that one worker of a long pass writes while the others write theirs.

One database takes one writer at a time: the workers write side by side while the server
records the files. The shards are attached to the database's connection (as ``g0``,
``g1``, ...) and a search asks every ``postings`` table. The database names the set
(``of``, a random name) and how many there are; a connection follows what is named
(``Attached.follow``), so a second server of the same index attaches the shards the first
one's workers wrote, and lets go of a set that was started afresh.
"""

from __future__ import annotations

import contextlib
import glob
import sqlite3
from pathlib import Path

from tether.index import postings


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
            self.db.execute(f"PRAGMA {name}.page_size={postings.PAGE_BYTES}")  # a new one's
            self.db.execute(f"PRAGMA {name}.journal_mode=WAL")
            self.db.execute(f"CREATE TABLE IF NOT EXISTS {name}.{postings.TABLE}")
            self.count += 1

    def detach(self) -> None:
        while self.count:
            self.count -= 1
            self.db.execute(f"DETACH g{self.count}")
        self.of = None

    def schemas(self) -> list[str]:
        """Where a ``postings`` table is: each shard."""
        return [f"g{n}" for n in range(self.count)]
