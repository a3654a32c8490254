"""The index on disk: one SQLite database per workspace, an FTS5 table of trigrams.

``grams`` is a contentless FTS5 table with ``detail=none``: it keeps, for each trigram,
only which documents hold it (the smallest form, and all a candidate search needs; the
text itself is read from the disk when it is searched). A document is a file's distinct
trigrams of word characters, a token each (``trigrams``), not its text: the trigrams a
search asks for all lie inside words, and FTS5's time goes by the tokens it is given.
``files`` maps each file (its workspace-relative path, as bytes: a name need not be
UTF-8) to its document, with the size and mtime it had when it was read, and its kind;
an index on (doc, kind) answers a search's join without reading the table itself.
``symbols`` holds each file's definitions, kept in the order of their paths (no index
beside it: a third less room).

A first build of many files writes its documents as posting lists of our own into shards
beside the database (``postings``, ``shards``), searched with it. A shard's documents are
committed before the files that name them, so a crash between leaves documents no file
names, never a file without its trigrams.

A contentless table cannot delete a document without its old text, so a file that
changes gets a new document and its old one is left behind, unreachable (no file names
it); ``garbage`` counts those, and the index is rebuilt when they outnumber the live ones.
Document ids are never reused (``next_doc``) until then, so a dead document can never come
back. Starting again from nothing gives the index a new ``generation``: another server of
it (``started_afresh``) then stops answering until it has walked the workspace again.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tether.index import postings, shards
from tether.index.names import Names

if TYPE_CHECKING:
    from tether.index.symbols import Definition

SCHEMA = 5  # 5: a long pass's shards hold posting lists (``postings``); 4: a document
# holds the file's distinct trigrams (``trigrams``), a token each; 3: its words; the
# definitions are kept in the order of their files
# text: indexed; binary: a NUL in its first 8 KB (ripgrep prints nothing of it); late: a
# NUL further on (ripgrep prints what it met before it: left to ripgrep's own walk);
# wide: UTF-16 with a BOM (ripgrep decodes it) and big: past the size cap, both searched
# whatever the pattern (as is a late file past the cap: a file without a document).
Kind = Literal["text", "binary", "late", "wide", "big"]

# A document's tokens are its trigrams (``trigrams``), "_" a letter.
_GRAMS = "fts5(body, tokenize=\"ascii tokenchars '_'\", content='', detail='none')"
_TABLES = f"""
CREATE TABLE IF NOT EXISTS files(
    path BLOB PRIMARY KEY, doc INTEGER, mtime_ns INTEGER, size INTEGER, kind TEXT,
    parsed INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS symbols(
    path BLOB, line INTEGER, name TEXT, kind TEXT, PRIMARY KEY(path, line, name)
) WITHOUT ROWID;
DROP INDEX IF EXISTS files_doc;
CREATE INDEX IF NOT EXISTS files_doc_kind ON files(doc, kind);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS grams USING {_GRAMS};
"""


_NAMES_AT_ONCE = 500  # bound parameters a statement, well within SQLite's limit


@dataclass(frozen=True)
class Seen:
    """One file as it was read: what the index keeps of it."""

    rel: bytes  # workspace-relative, "/"-separated
    mtime_ns: int
    size: int
    kind: Kind
    document: str | None  # a "text" or "late" file's: its trigrams (``trigrams.paired``)
    doc: int | None = None  # its document, when it is in a shard already (``postings``)


class Database:
    """The index of one workspace. Not thread-safe: its owner serialises calls."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.path = path
        self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self._count: int | None = None
        self._writes = 0  # this connection's (``version``)
        self._attached = shards.Attached(self.db, path)
        self.names = Names(self.db)
        if self._meta("schema") not in (None, str(SCHEMA)):
            self.clear()
        self.db.executescript(_TABLES)
        self._set("schema", str(SCHEMA))
        self.db.execute(
            "INSERT OR IGNORE INTO meta VALUES ('generation', ?)", (secrets.token_hex(8),)
        )
        self._generation = self._meta("generation")  # the index as this server built on it
        self._follow_shards()

    def close(self) -> None:
        self.db.close()

    def clear(self) -> None:
        """Start again from nothing (a new schema, or too much garbage)."""
        self._count = None
        self._writes += 1
        self._attached.detach()
        shards.remove(self.path)
        self.db.executescript(
            "DROP TABLE IF EXISTS files; DROP TABLE IF EXISTS grams; DROP TABLE IF EXISTS meta;"
            "DROP TABLE IF EXISTS symbols;"
        )
        self.db.executescript(_TABLES)
        self._generation = secrets.token_hex(8)
        self._set("generation", self._generation)

    def started_afresh(self) -> bool:
        """Whether another server of this index (a second editor window) started it again
        from nothing since this one last built on it (``built_on``)."""
        return self._meta("generation") != self._generation

    def built_on(self) -> None:
        """This server's pass over the index as it is now is done: it may answer from it."""
        self._generation = self._meta("generation")

    def shards(self, count: int) -> list[Path]:
        """The files of ``count`` shards, named (for every server of this index) and
        attached if there were fewer."""
        with self._transaction():  # one server at a time names them
            of = self._meta("shards_of") or secrets.token_hex(4)
            if int(self._meta("shards") or 0) < count:
                self._set("shards_of", of)
                self._set("shards", str(count))
        self._follow_shards()
        return [shards.path_of(self.path, of, n) for n in range(count)]

    def reserve(self, count: int) -> int:
        """The first of ``count`` document ids set aside for shards to use."""
        with self._transaction():
            first = int(self._meta("next_doc") or 1)
            self._set("next_doc", str(first + count))
        return first

    def _follow_shards(self) -> None:
        """Attach the shards named (another server may have named more since, or started
        again from nothing)."""
        self._attached.follow(self._meta("shards_of"), int(self._meta("shards") or 0))

    def known(self) -> dict[bytes, tuple[int, int]]:
        """Every file in the index, with the mtime and size it had when it was read."""
        rows = self.db.execute("SELECT path, mtime_ns, size FROM files")
        return {bytes(path): (mtime, size) for path, mtime, size in rows}

    def put(self, seen: Sequence[Seen], gone: Iterable[bytes] = ()) -> None:
        """Record files read (replacing what was known of them) and drop files gone, in one
        transaction: a crash leaves the index as it was before or after, never between."""
        self._count = None
        self._writes += 1
        latest = {file.rel: file for file in seen}  # a file read twice: as read last
        with self._transaction():
            next_doc = int(self._meta("next_doc") or 1)
            dead = self._forget([*dict.fromkeys([*gone, *latest])])
            documents: list[tuple[int, str]] = []
            rows: list[tuple[bytes, int | None, int, int, Kind]] = []
            for file in latest.values():
                doc = file.doc
                if doc is None and file.document is not None:
                    doc, next_doc = next_doc, next_doc + 1
                    documents.append((doc, file.document))
                rows.append((file.rel, doc, file.mtime_ns, file.size, file.kind))
            # A statement a batch, not a file: 42,000 files took 0.6 s of the server's CPU.
            self.db.executemany("INSERT INTO grams(rowid, body) VALUES (?, ?)", documents)
            self.db.executemany("INSERT INTO files VALUES (?, ?, ?, ?, ?, 0)", rows)
            self._set("next_doc", str(next_doc))
            if dead:
                self._set("garbage", str(self.garbage() + dead))

    def _forget(self, rels: list[bytes]) -> int:
        """Drop these files' rows (distinct names); how many documents that leaves behind."""
        dead = 0
        for at in range(0, len(rels), _NAMES_AT_ONCE):
            names = rels[at : at + _NAMES_AT_ONCE]
            among = f"path IN ({', '.join('?' * len(names))})"
            sql = f"SELECT count(*) FROM files WHERE doc IS NOT NULL AND {among}"
            dead += int(self.db.execute(sql, names).fetchone()[0])
            self.db.execute(f"DELETE FROM files WHERE {among}", names)
            self.db.execute(f"DELETE FROM symbols WHERE {among}", names)
        return dead

    def matching(
        self, branches: list[list[str]], at_least: int, share: float
    ) -> list[tuple[bytes, Kind]] | None:
        """Files whose text holds every trigram of some branch, and those searched always;
        None when there are more than ``at_least`` and ``share`` of the files."""
        at_most = max(at_least, int(share * self.count()))
        self._follow_shards()
        from_shards = postings.matching(self.db, self._attached.schemas(), branches)
        if len(from_shards) > at_most:
            return None
        query = " OR ".join(
            "(" + " AND ".join('"' + gram.replace('"', '""') + '"' for gram in branch) + ")"
            for branch in branches
        )
        # The documents, one more than allowed at most, come as one row ("3,17,42"): the
        # trigram table is searched once, and a pattern past the bound costs no more
        # than counting them (a row a document cost 0.4 µs each; counting, then naming,
        # searched the table twice). A document left behind by a changed file counts
        # too, so this may say None a little early, never late; no file is named by it.
        most = at_most - len(from_shards)
        (listed,) = self.db.execute(
            "SELECT group_concat(doc) FROM"
            " (SELECT rowid AS doc FROM main.grams WHERE grams MATCH :query LIMIT :most)",
            {"query": query, "most": most + 1},
        ).fetchone()
        if listed and listed.count(",") >= most:
            return None
        docs = [*map(int, listed.split(",")), *from_shards] if listed else from_shards
        named = self.names.of(docs, self.version(), self.count())
        always = self.db.execute(
            "SELECT path, kind FROM files WHERE doc IS NULL AND kind != 'binary'"
        )
        named += [(bytes(path), kind) for path, kind in always]
        return None if len(named) > at_most else named

    def keep_names(self) -> None:
        """Make the map from document to file (``names``) of the index as it is now: by
        the version before it is read, so a write meanwhile leaves it unused."""
        self.names.keep(self.version(), self.count())

    def unparsed(self, limit: int) -> list[bytes]:
        """Text files whose definitions have not been taken yet."""
        rows = self.db.execute(
            "SELECT path FROM files WHERE parsed = 0 AND kind = 'text' LIMIT ?", (limit,)
        )
        return [bytes(path) for (path,) in rows]

    def definitions_taken(self) -> tuple[int, int]:
        """How many text files' definitions have been taken, and of how many."""
        files, done = self.db.execute(
            "SELECT count(*), total(parsed) FROM files WHERE kind = 'text'"
        ).fetchone()
        return int(done), int(files)

    def put_definitions(self, found: Sequence[tuple[bytes, Sequence[Definition]]]) -> None:
        """Record files' definitions (replacing what was known of them), in one transaction."""
        with self._transaction():
            for rel, definitions in found:
                self.db.execute("DELETE FROM symbols WHERE path = ?", (rel,))
                self.db.executemany(
                    "INSERT OR IGNORE INTO symbols(path, name, kind, line) VALUES (?, ?, ?, ?)",
                    [(rel, d.name, d.kind, d.line) for d in definitions],
                )
                self.db.execute("UPDATE files SET parsed = 1 WHERE path = ?", (rel,))

    def symbols(
        self, like: str, kind: str | None, under: bytes | None, limit: int
    ) -> list[tuple[bytes, str, str, int]]:
        """Definitions whose name is LIKE ``like`` (ASCII case ignored), of ``kind``, in
        the file ``under`` or the files below it: at most ``limit``."""
        sql = "SELECT path, name, kind, line FROM symbols WHERE name LIKE ? ESCAPE '\\'"
        args: list[object] = [like]
        if kind is not None:
            sql += " AND kind = ?"
            args.append(kind)
        if under is not None:  # the file itself, or the files below the directory
            sql += " AND (path = ? OR (path >= ? AND path < ?))"
            args += [under, under + b"/", under + b"0"]
        rows = self.db.execute(sql + " LIMIT ?", [*args, limit])
        return [(bytes(path), name, kind_, line) for path, name, kind_, line in rows]

    def version(self) -> tuple[int, int]:
        """Changes when the index is written, by this connection or another."""
        return self._writes, int(self.db.execute("PRAGMA data_version").fetchone()[0])

    def below(self, rel: bytes) -> list[bytes]:
        """The files the index holds under the directory ``rel`` (b"": all of them)."""
        if not rel:
            return [bytes(path) for (path,) in self.db.execute("SELECT path FROM files")]
        low, high = rel + b"/", rel + b"0"  # "0" sorts right after "/"
        rows = self.db.execute("SELECT path FROM files WHERE path >= ? AND path < ?", (low, high))
        return [bytes(path) for (path,) in rows]

    def count(self) -> int:
        """How many files it holds (counted once after each change: every search asks)."""
        if self._count is None:
            self._count = int(self.db.execute("SELECT count(*) FROM files").fetchone()[0])
        return self._count

    def garbage(self) -> int:
        return int(self._meta("garbage") or 0)

    def meta(self, key: str) -> str | None:
        return self._meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._set(key, value)

    def _meta(self, key: str) -> str | None:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:  # no table yet
            return None
        return None if row is None else str(row[0])

    def _set(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def _transaction(self) -> _Transaction:
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, kind: object, *rest: object) -> None:
        self.db.execute("COMMIT" if kind is None else "ROLLBACK")
