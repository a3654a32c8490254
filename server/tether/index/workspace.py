"""A workspace's index, kept fresh: built in the background, brought up to date at start
without reading what did not change, and told of every change while it serves.

At start the index learns what changed since it was last up to date (``freshness``: git
where it can tell, else a walk comparing sizes and mtimes) and reads just those files, in
batches (``workers``), reporting its progress; meanwhile a search runs ripgrep. The
files' definitions follow, for ``index-symbols``. It answers only while a watcher tells
it of every change (``follow``: the editor's file watcher, or tether's own, ``watching``;
``unfollow`` when that one stops; while it is down for a while, ``pause``, each search
first catches up with the disk); each change told is applied before the next search. A
change tether made itself (``unsure``: a command, a patch) is caught up with before the
next search (``catching_up``). A change to an ignore file changes which files belong:
the workspace is walked again, in the background.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import TypeVar

from tether.index import build_lock, freshness, reads, workers
from tether.index.catching_up import CatchingUp
from tether.index.database import Database
from tether.index.in_thread import in_thread
from tether.index.literals import required
from tether.index.location import opened
from tether.index.progress import NoProgress, Progress
from tether.index.reading import relative
from tether.index.symbol_search import ranked
from tether.index.symbols import like
from tether.tools.index_view import Kept, Symbols

log = logging.getLogger(__name__)
T = TypeVar("T")
BATCH = 400  # files read and committed at a time while building
WORKER_BATCH = 800  # by a worker process, into a shard: a segment (``postings``)
# Past a thousand candidates and a quarter of the files, ripgrep's walk (it stops once its
# count is in) is as fast: "self", 30% of a 41,394-file tree, 44 ms by the index, 16 walking.
MAX_SHARE, ALWAYS_NARROWED = 0.25, 1_000
MAX_SYMBOL_ROWS = 20_000  # definitions ranked per query at most
# An index of at most this many files is asked on the event loop: its questions take a
# millisecond or two (727 of the standard library's 2,450 files: 1.4 ms), less than the
# hop to a thread and back, which waits for the GIL behind a reply's other reads. A
# larger one is asked in a thread, and the loop serves the editor meanwhile (42,532
# files: 8-18 ms a search's question, 33 at worst).
ON_LOOP_FILES = 5_000
# And only a short question: each alternative of a pattern costs the query ~0.3 ms (8: 2.8
# ms; 64: 21 ms; 2,000, which a model may send: 0.7 s), and finding the trigrams of a
# long pattern 0.5 ms a 1,000 characters (its arguments may hold 8 MiB).
ON_LOOP_BRANCHES = 8
ON_LOOP_PATTERN = 1_000  # characters


class WorkspaceIndex:
    def __init__(self, workspace: Path, path: Path) -> None:
        self.root = workspace
        self.path = path
        self.ready = False  # built and up to date with the disk as last walked
        self.defined = False  # every text file's definitions taken (else: answers say how many)
        self.following = False  # every change is being told (else: not trusted)
        self.paused = False  # the watcher is down for a while: each search catches up first
        self.last_build: dict[str, float | bool] = {}  # what the last walk did, for the bench
        self._db: Database | None = None
        self._lock = asyncio.Lock()
        self._pending: set[Path] = set()
        self._rebuilding: asyncio.Future[None] | None = None
        self._naming: asyncio.Future[None] | None = None  # ``_keep_names``
        self._closing = False  # the server stops: a build ends at its next batch
        self._told: set[bytes] = set()  # changes applied since the last walk recorded git's
        self._catching = CatchingUp()  # with tether's own changes (``unsure``)
        self._lost = False  # a watcher that told the changes stopped: never answer again
        self._kept: tuple[tuple[Database, tuple[int, int]], Kept] | None = None

    @property
    def closing(self) -> bool:
        return self._closing

    def follow(self) -> None:
        """Changes are told from now on (the editor's watcher or tether's): answer searches."""
        self.following, self.paused = not self._lost, False

    def unfollow(self) -> None:
        """The watcher stopped: a change could go unseen, so searches run ripgrep."""
        self._lost, self.following = True, False

    def pause(self) -> None:
        """The watcher is down for a while (it starts again, then calls ``unsure`` and
        ``follow``): meanwhile each search first catches up with the disk, as after a
        change tether made (``catching_up``), and runs ripgrep when that takes too long.
        (It once stopped answering instead; but a mere read of a file whose name is not
        UTF-8 kills the watch, and ripgrep's own walk reads it: in such a workspace the
        index answered next to nothing.)"""
        self.paused = True

    def unsure(self) -> None:
        """tether itself may just have changed files (a command, a patch, an MCP tool that
        is not read-only): the next search catches up first, whatever the watcher's
        latency (``catching_up``)."""
        self._catching.mark()

    async def build(self, progress: Progress | None = None, define: bool = True) -> None:
        """Bring the index up to date with the disk: walk, and read what changed; then
        (``define``) take the definitions of the files that need it. Another server's
        passes over the same index are waited for (``build_lock``)."""
        if self._closing:
            return
        progress = progress or NoProgress()
        self.ready = False
        progress.begin("tether: indexing the workspace")

        def waiting() -> None:
            progress.report("waiting for another tether window's build of this index", 0)

        async with build_lock.held(self.path, waiting, lambda: self._closing) as mine:
            ended = await self._passes(progress, define) if mine else "stopped"
        progress.end(ended)

    async def _passes(self, progress: Progress, define: bool) -> str:
        """``build``'s passes; what to end its progress with."""
        marked = self._catching.marked  # the walk below sees what tether changed before it
        try:
            async with self._lock:
                await in_thread(self._tidied)
                await self._build(progress)
        except Exception as exc:  # the index is a speed-up: without it searches run rg
            log.warning("the workspace index could not be built: %s", exc)
            return "the index could not be built; searches run ripgrep"
        self.ready = True
        self._catching.up_to(marked)
        try:
            if define:
                await self._define(progress)
        except Exception as exc:
            log.warning("the workspace's definitions could not be indexed: %s", exc)
        return f"indexed {self.last_build.get('files', 0):.0f} files"

    async def _define(self, progress: Progress) -> None:
        """Take the definitions of every text file in a language the index parses, after the
        trigrams (searches use the index meanwhile), a batch at a time: in worker
        processes when there are many."""
        async with self._lock:
            if self._db is None:
                return
            done, files = await in_thread(self._db.definitions_taken)
        async with workers.for_pass(
            workers.cores(), partial(workers.ready, False, True)
        ) as long_pass:
            long_pass.expect(files - done)
            while (db := self._db) is not None and not self._closing:
                async with self._lock:
                    if self._db is not db:
                        return  # closed meanwhile
                    parsed = await workers.define(self.root, db, BATCH, long_pass.workers)
                if not parsed:
                    break
                progress.report(f"definitions of {parsed} more files taken", 100)
        self.defined = True

    async def _build(self, progress: Progress, define: bool = False) -> None:
        began = time.perf_counter()
        # The pass below sees every change told so far: what git lists, and these.
        told = {relative(self.root, p) for p in self._pending if p.is_relative_to(self.root)}
        also, self._told = self._told | told, set()
        self._pending.clear()
        db = await in_thread(self._open)

        def going_on(done: int) -> bool:
            progress.report(f"{done}/{len(read)} files read", 100 * done // max(len(read), 1))
            return not self._closing  # what is read is committed; the next start reads the rest

        ready = partial(workers.ready, True, define)
        async with workers.for_pass(workers.cores(), ready) as long_pass:
            # The workers start as soon as the walk has found enough files to read.
            found, git = await freshness.stale(self.root, db, also, long_pass.expect)
            walked = time.perf_counter()
            read = found.read
            long_pass.expect(len(read))
            pool = long_pass.workers
            size = BATCH if pool is None else WORKER_BATCH
            batches = [read[start : start + size] for start in range(0, max(len(read), 1), size)]
            await workers.read(self.root, db, batches, found.gone, define, pool, going_on)
        if self._closing:
            return
        await in_thread(freshness.record, self.root, db, git)
        db.built_on()
        self.last_build = {
            "files": found.files,
            "read": len(read),
            "by_git": found.how == "git",
            "walk_s": walked - began,
            "total_s": time.perf_counter() - began,
        }

    def _open(self) -> Database:
        if self._db is None:
            self._db = opened(self.path)
        return self._db

    def _tidied(self) -> Database:
        """The database, started again from nothing when its dead documents outnumber the
        live ones: only by a pass that holds the build lock (``build``), never by a
        catch-up, which would drop the tables under another server's build."""
        db = self._open()
        if db.garbage() > max(db.count(), 1000):
            db.clear()
        return db

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
            told = await in_thread(reads.apply, self.root, self._db, paths)
            self._told |= told  # for git's next pass (``_build``)

    async def candidates(self, pattern: str, ignore_case: bool) -> list[bytes] | None:
        """The files that may hold a match of ``pattern`` (workspace-relative, in no order);
        None when the index cannot tell (not built, not told of changes, a pattern it cannot
        narrow, a file left to ripgrep's walk among them) or should not (``MAX_SHARE``)."""
        if len(pattern) <= ON_LOOP_PATTERN:
            branches = required(pattern, ignore_case)
        else:
            branches = await asyncio.to_thread(required, pattern, ignore_case)
        if branches is None:
            return None
        rows = await self._asked(
            lambda db: db.matching(branches, ALWAYS_NARROWED, MAX_SHARE),
            light=len(branches) <= ON_LOOP_BRANCHES,
        )
        if self._db is not None and self._db.names.wanted and self._naming is None:
            self._naming = asyncio.ensure_future(self._keep_names(self._db))
        if rows is None or any(kind == "late" for _, kind in rows):
            return None
        return [rel for rel, _ in rows]

    async def _keep_names(self, db: Database) -> None:
        """The map from document to file a question of many documents wanted (``names``),
        made after it, for the next one's sake."""
        try:
            async with self._lock:
                if self._db is db and not self._closing:
                    await in_thread(db.keep_names)
        finally:
            self._naming = None

    async def kept(self) -> Kept | None:
        """The files the walk keeps, as the index holds them; None when the index cannot
        tell (not built, not told of changes). Made again only after a write, this
        server's or another's (fs-find and fs-list ask at every call)."""
        # Light: made again only after a write (2,450 files: 2.3 ms), else kept.
        return await self._asked(self._kept_now, light=True)

    def _kept_now(self, db: Database) -> Kept:
        now = (db, db.version())
        if self._kept is None or self._kept[0] != now:
            self._kept = (now, Kept.of(db.below(b"")))
        return self._kept[1]

    async def _asked(self, question: Callable[[Database], T], light: bool = False) -> T | None:
        """``question`` answered by the database, once it may answer: built, told of every
        change, caught up with tether's own, the changes told applied, and not started
        again from nothing by another server of it since (a second editor window: its
        rebuild may be partial, so this one walks again, in the background); else None.
        The last check and the question go together, on the loop for a ``light`` one (a
        millisecond or two) to a small index (``ON_LOOP_FILES``), else to a thread: in a
        reply of many reads each hop to a thread and back waits for the GIL (a search's
        ripgrep started 20 ms into a reply of 8 reads; 5 with its question asked on the
        loop). A symbols question is never light: 10-28 ms for the standard library's."""
        if not (self.ready and self.following) or self._db is None:
            return None
        if self.paused:
            self._catching.mark()  # no watcher tells the changes: the disk itself is asked
        if not await self._catching.caught_up(self._catch_up):
            return None
        await self.refresh()
        if (db := self._db) is None or not self.ready:
            return None
        async with self._lock:
            if light and db.count() <= ON_LOOP_FILES:
                afresh, answer = _unless_afresh(db, question)
            else:
                afresh, answer = await in_thread(_unless_afresh, db, question)
        if afresh:
            self.ready = False
            if self._rebuilding is None or self._rebuilding.done():
                self._rebuilding = asyncio.ensure_future(self.build())
            return None
        return answer

    async def symbols(
        self, query: str, kind: str | None, under: Path, live: dict[Path, str]
    ) -> Symbols | None:
        """Definitions matching ``query``, best first (see ``symbols.rank``), from the files
        whose definitions are taken so far (while the pass goes on: it says how far)."""
        prefix = None if under == self.root else relative(self.root, under)

        def taken(db: Database) -> tuple[list[tuple[bytes, str, str, int]], tuple[int, int]]:
            rows = db.symbols(like(query), kind, prefix, MAX_SYMBOL_ROWS)
            return rows, (0, 0) if self.defined else db.definitions_taken()

        if (answer := await self._asked(taken)) is None:
            return None
        rows, (done, files) = answer
        hits = await asyncio.to_thread(ranked, query, kind, self.root, under, rows, live)
        return Symbols(hits, files - done, files)

    async def _catch_up(self) -> float | None:
        """One pass catching up with tether's own changes; how long it took, None when
        it could not run."""
        try:
            async with self._lock:
                if self._db is None or self._closing:
                    return None
                began = time.perf_counter()
                await self._build(NoProgress(), define=True)
                return time.perf_counter() - began
        except Exception as exc:
            log.warning("the workspace index could not catch up (%s): searches run rg", exc)
            return None

    async def close(self) -> None:
        """Close the database once the batch being read (if any) is committed."""
        self._closing = True
        for task in (self._rebuilding, self._naming):
            if task is not None:
                await asyncio.gather(task, return_exceptions=True)
        await self._catching.close()
        async with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _unless_afresh(db: Database, question: Callable[[Database], T]) -> tuple[bool, T | None]:
    """Whether another server started the index afresh; else ``question``'s answer."""
    if db.started_afresh():
        return True, None
    return False, question(db)
