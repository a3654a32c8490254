"""A workspace's index, kept fresh: built in the background, brought up to date at start
without reading what did not change, and told of every change while it serves.

At start the index learns what changed since it was last up to date (``freshness``: git
where it can tell, else a walk comparing sizes and mtimes) and reads just those files,
in batches on a worker thread, reporting its progress; a search meanwhile is told the
index is not ready (and runs ripgrep). The files' definitions follow, for
``index-symbols``. It answers only while something tells it of every change (``follow``:
the editor's file watcher); each change told is applied before the next search, so a
search never misses a change it was told of. A change to an ignore file changes which
files belong: the workspace is walked again, in the background.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import os
import sqlite3
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from tether.index import freshness
from tether.index.database import Database, Seen
from tether.index.literals import required
from tether.index.reading import absolute, belongs, examine, relative
from tether.index.symbols import Definition, definitions, like, rank, supported
from tether.tools.base import SymbolHit
from tether.tools.ignore import enters, walk_files

log = logging.getLogger(__name__)
BATCH = 400  # files read and committed at a time while building
MAX_CANDIDATES = 25_000  # beyond this, the names would not fit on ripgrep's command line
MAX_SYMBOL_ROWS = 20_000  # definitions ranked per query at most


class Progress(Protocol):
    """Where the build's progress is told (the editor's ``$/progress``)."""

    def begin(self, title: str) -> None: ...

    def report(self, message: str, percentage: int) -> None: ...

    def end(self, message: str) -> None: ...


class NoProgress:
    def begin(self, title: str) -> None:
        pass

    def report(self, message: str, percentage: int) -> None:
        pass

    def end(self, message: str) -> None:
        pass


def database_path(state_dir: Path, workspace: Path) -> Path:
    """Where a workspace's index lives: one file per workspace under ``state_dir``."""
    digest = hashlib.sha256(str(workspace).encode(errors="surrogateescape")).hexdigest()
    return state_dir / "index" / f"{digest[:24]}.sqlite3"


class WorkspaceIndex:
    def __init__(self, workspace: Path, path: Path) -> None:
        self.root = workspace
        self.path = path
        self.ready = False  # built and up to date with the disk as last walked
        self.defined = False  # every text file's definitions taken (index-symbols answers)
        self.following = False  # every change is being told (else: not trusted)
        self.last_build: dict[str, float | bool] = {}  # what the last walk did, for the bench
        self._db: Database | None = None
        self._lock = asyncio.Lock()
        self._pending: set[Path] = set()
        self._rebuilding: asyncio.Future[None] | None = None
        self._closing = False  # the server stops: a build ends at its next batch

    def follow(self) -> None:
        """Changes are told from now on (the editor watches the files): answer searches."""
        self.following = True

    async def build(self, progress: Progress | None = None, define: bool = True) -> None:
        """Bring the index up to date with the disk: walk, and read what changed; then
        (``define``) take the definitions of the files that need it."""
        if self._closing:
            return
        progress = progress or NoProgress()
        self.ready = False
        progress.begin("tether: indexing the workspace")
        try:
            async with self._lock:
                await self._build(progress)
        except Exception as exc:  # the index is a speed-up: without it searches run rg
            log.warning("the workspace index could not be built: %s", exc)
            progress.end("the index could not be built; searches run ripgrep")
            return
        self.ready = True
        try:
            if define:
                await self._define(progress)
        except Exception as exc:
            log.warning("the workspace's definitions could not be indexed: %s", exc)
        progress.end(f"indexed {self.last_build.get('files', 0):.0f} files")

    async def _define(self, progress: Progress) -> None:
        """Take the definitions of every text file in a language the index parses, after the
        trigrams (searches use the index meanwhile), a batch at a time."""
        while self._db is not None and not self._closing:
            db = self._db
            async with self._lock:
                done = await asyncio.to_thread(self._define_batch, db)
            if not done:
                break
            progress.report(f"definitions of {done} more files taken", 100)
        self.defined = True

    def _define_batch(self, db: Database) -> int:
        batch = db.unparsed(BATCH)
        found: list[tuple[bytes, list[Definition]]] = []
        for rel in batch:
            path = absolute(self.root, rel)
            file = examine(self.root, path) if supported(path.name) else None
            text = file.text if file is not None else None
            found.append((rel, definitions(text, path.suffix) if text is not None else []))
        db.put_definitions(found)
        return len(batch)

    async def _build(self, progress: Progress) -> None:
        began = time.perf_counter()
        self._pending.clear()  # the walk below sees every change told so far
        db = await asyncio.to_thread(self._open)
        found, git = await freshness.stale(self.root, db)  # the database's reads: a thread
        walked = time.perf_counter()
        read = found.read
        for start in range(0, max(len(read), 1), BATCH):
            if self._closing:
                return  # what is read is committed; the next start reads the rest
            batch = read[start : start + BATCH]
            await asyncio.to_thread(self._read, db, batch, found.gone if start == 0 else ())
            done = min(start + BATCH, len(read))
            progress.report(f"{done}/{len(read)} files read", 100 * done // max(len(read), 1))
        await asyncio.to_thread(freshness.record, self.root, db, git)
        self.last_build = {
            "files": found.files,
            "read": len(read),
            "by_git": found.how == "git",
            "walk_s": walked - began,
            "total_s": time.perf_counter() - began,
        }

    def _open(self) -> Database:
        if self._db is None:
            try:
                self._db = Database(self.path)
            except sqlite3.DatabaseError as exc:  # not a database (a crash, a stray file):
                log.warning("the workspace index was unreadable (%s); building it anew", exc)
                for stale in (self.path, *(Path(f"{self.path}{end}") for end in ("-wal", "-shm"))):
                    stale.unlink(missing_ok=True)  # it is only ever rebuilt from the disk
                self._db = Database(self.path)
        if self._db.garbage() > max(self._db.count(), 1000):
            self._db.clear()  # more dead documents than live ones: start again
        return self._db

    def _read(
        self, db: Database, paths: list[Path], gone: Iterable[bytes] = (), define: bool = False
    ) -> None:
        """Read ``paths`` into the index and drop ``gone``; ``define``: take the files'
        definitions now too (a few files changed, rather than the whole build)."""
        seen: list[Seen] = []
        lost: list[bytes] = list(gone)
        for path in paths:
            file = examine(self.root, path)
            if file is None:
                lost.append(relative(self.root, path))
            else:
                seen.append(file)
        db.put(seen, lost)
        if define:
            db.put_definitions(
                [
                    (file.rel, definitions(file.text, _suffix(file.rel)))
                    for file in seen
                    if file.kind == "text" and file.text is not None
                ]
            )

    def changed(self, paths: Iterable[Path]) -> None:
        """Files created, changed or deleted (as the editor's watcher or its saves tell):
        applied before the next search. A changed ignore file changes which files belong:
        the workspace is walked again in the background, and searches run ripgrep until
        it is done."""
        rewalk = False
        exclude = self.root / ".git" / "info" / "exclude"
        for path in paths:
            if path == exclude or path.name == ".gitignore":
                rewalk = True
            elif path.is_relative_to(self.root / ".git"):
                continue  # git's own files (the watcher sees them too) are never indexed
            self._pending.add(path)
        if rewalk and self._db is not None:
            self.ready = False
            self._rebuilding = asyncio.ensure_future(self.build())

    async def settled(self) -> None:
        """Wait for a walk started by a changed ignore file to end."""
        if self._rebuilding is not None:
            await asyncio.shield(self._rebuilding)

    async def refresh(self) -> None:
        """Apply the changes told so far."""
        if not self._pending or self._db is None:
            return
        async with self._lock:
            paths, self._pending = self._pending, set()
            await asyncio.to_thread(self._apply, self._db, paths)

    def _apply(self, db: Database, paths: set[Path]) -> None:
        keep: list[Path] = []
        dropped: list[bytes] = []
        for path in paths:
            if not path.is_relative_to(self.root) or path == self.root:
                continue
            if belongs(self.root, path):
                keep.append(path)
                continue
            rel = relative(self.root, path)
            dropped += [rel, *db.below(rel)]  # a file gone, or a directory and all below
            if enters(self.root, path):
                keep += walk_files(self.root, path)  # a directory moved or made here
        self._read(db, keep, dropped, define=True)

    async def candidates(self, pattern: str, ignore_case: bool) -> list[Path] | None:
        """The files that may hold a match of ``pattern``, in no order; None when the index
        cannot tell (not built, not told of changes, a pattern it cannot narrow, or a file
        it must leave to ripgrep's walk among them)."""
        if not (self.ready and self.following) or self._db is None:
            return None
        branches = required(pattern, ignore_case)
        if branches is None:
            return None
        await self.refresh()
        if not self.ready:
            return None
        db = self._db
        async with self._lock:
            rows = await asyncio.to_thread(db.matching, branches)
        if len(rows) > MAX_CANDIDATES or any(kind == "late" for _, kind in rows):
            return None
        return [absolute(self.root, rel) for rel, _ in rows]

    async def symbols(
        self, query: str, kind: str | None, under: Path, live: dict[Path, str]
    ) -> list[SymbolHit] | None:
        """Definitions matching ``query``, best first (see ``symbols.rank``)."""
        if not (self.defined and self.following) or self._db is None:
            return None
        await self.refresh()
        db = self._db
        prefix = None if under == self.root else relative(self.root, under)
        async with self._lock:
            rows = await asyncio.to_thread(db.symbols, like(query), kind, prefix, MAX_SYMBOL_ROWS)
        hits = [
            SymbolHit(absolute(self.root, rel), line, found_kind, name)
            for rel, name, found_kind, line in rows
            if absolute(self.root, rel) not in live
        ]
        for path, text in live.items():
            if path.is_relative_to(under) and supported(path.name):
                for found in await asyncio.to_thread(definitions, text, path.suffix):
                    if kind is None or found.kind == kind:
                        hits.append(SymbolHit(path, found.line, found.kind, found.name))
        ranked = [(score, hit) for hit in hits if (score := rank(query, hit.name)) is not None]
        ranked.sort(key=lambda pair: (pair[0], str(pair[1].path), pair[1].line))
        return [hit for _, hit in ranked]

    async def close(self) -> None:
        """Close the database once the batch being read (if any) is committed."""
        self._closing = True
        if self._rebuilding is not None:
            await asyncio.gather(self._rebuilding, return_exceptions=True)
        async with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _suffix(rel: bytes) -> str:
    return os.path.splitext(os.fsdecode(rel))[1]
