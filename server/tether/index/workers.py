"""Processes that read and parse the files for a long pass: the first build of a big
workspace, and its definitions.

In the server, reading the files, taking their words and parsing them share one GIL with
the writes, and an FTS5 insert makes no progress while Python runs on another thread
(measured), so a pass on the server's threads uses one core. A pass over ``FROM_FILES``
files or more reads them in worker processes instead, one per core (up to four): each
reads a batch and writes its trigrams, as a segment of posting lists (``postings``), into
a shard of the index no other is writing (``Database.shards``: a database takes one
writer at a time), the server recording the files; then each parses for the
definitions. On the
bench's big tree (41,391 files, 2 cores, side by side) the index was searchable after
8.3 to 8.5 s, where one reading worker beside the server's writes took 9.5 to 11.5 and
the server's threads alone 11.5; its definitions were taken in 15 to 19 s instead of 29.

The workers are started for the pass (``spawn``: the same on every platform) as soon as
it is known to be long, while the walk still finds the files (``Pass``), and stopped and
reaped after it, at a lower priority than the server's (``give_way``). A reading worker
imports no parser and none of the tools' models (``tools.regular``): it starts in 0.2 s,
where it took 0.35. A worker's
standard output is the server's, inherited: ``quiet``
points it at the null device before the worker runs anything of ours, so nothing it
prints can reach the editor (its standard input multiprocessing closes). A worker that
dies (a parser crashing on a file) costs the batches it had: those being read are read
again on a thread without their definitions (the definitions pass takes them up), those
being parsed are recorded with none, and new workers take the next.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import multiprocessing
import os
import sys
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

from tether.index import reads, trigrams
from tether.index.database import Database
from tether.index.in_thread import in_thread

log = logging.getLogger(__name__)
T = TypeVar("T")
# Fewer are read on a thread (a worker takes ~0.2 s to start). At 2,450 files (the stdlib)
# the build took as long either way, the definitions 2.6-3.0 s instead of 4.2-4.6.
FROM_FILES = 2_000
NICENESS = 10  # a worker's, above the server's (macOS and Linux)
_BELOW_NORMAL = 0x4000  # Windows' BELOW_NORMAL_PRIORITY_CLASS


def cores() -> int:
    return max(1, min(4, os.cpu_count() or 1))


class Workers:
    """Worker processes for one pass."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._pool = self._start()

    def _start(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(self.count, mp_context=context, initializer=started)

    def warm(self, ready: Callable[[], None]) -> None:
        """Start every worker now, rather than at the first batch: each makes ready what
        the pass's batches need (``ready``) while the server still walks."""
        for _ in range(self.count):
            self._pool.submit(ready)

    async def run(self, function: Callable[..., T], *args: Any) -> T:
        """``function(*args)`` in a worker; BrokenProcessPool if the worker died (the next
        call starts new ones)."""
        pool = self._pool
        try:
            return await asyncio.wrap_future(pool.submit(function, *args))
        except BrokenProcessPool:
            if self._pool is pool:
                pool.shutdown(wait=False, cancel_futures=True)
                self._pool = self._start()
            raise

    async def close(self) -> None:
        """Stop the workers once their batches are done (the next are not started), and
        reap them."""
        await asyncio.to_thread(self._pool.shutdown, wait=True, cancel_futures=True)


class Pass:
    """One pass's workers: none until it is known to be long (``expect``), so a pass over a
    few files runs on threads, and a long one's workers start while the walk still finds
    its files (a worker takes ~0.2 s to start)."""

    def __init__(self, count: int, ready: Callable[[], None]) -> None:
        self.count = count
        self.ready = ready  # each worker's first task
        self.workers: Workers | None = None
        self._loop = asyncio.get_running_loop()
        self._asked = False
        self.ended = False  # a walk cancelled under it still asks: none may start after

    def expect(self, files: int) -> None:
        """``files`` are to be read (so far): from ``FROM_FILES`` on, the workers start.
        Called from the walk's thread too."""
        if files < FROM_FILES or self._asked:
            return
        self._asked = True
        try:
            here = asyncio.get_running_loop() is self._loop
        except RuntimeError:  # the walk's thread
            here = False
        if here:
            self._start()
        else:
            self._loop.call_soon_threadsafe(self._start)

    def _start(self) -> None:
        if self.workers is None and not self.ended:
            self.workers = Workers(self.count)
            try:
                self.workers.warm(self.ready)
            except Exception as exc:  # no process could start: the first batch says so
                log.debug("workers could not start ahead of the pass: %s", exc)


@contextlib.asynccontextmanager
async def for_pass(count: int, ready: Callable[[], None]) -> AsyncIterator[Pass]:
    """Up to ``count`` workers for a pass (``Pass.expect`` starts them, each making
    ``ready`` first), stopped and reaped after it however it ends."""
    long_pass = Pass(count, ready)
    try:
        yield long_pass
    finally:
        long_pass.ended = True
        if long_pass.workers is not None:
            await long_pass.workers.close()


def started() -> None:
    """First thing in a worker: nothing it prints reaches the editor, and it gives way."""
    quiet()
    give_way()


def ready(read: bool, define: bool) -> None:
    """A worker's first task (``Workers.warm``), what its pass's batches need: the tables
    their trigrams take (``read``), the parsers' modules (``define``). The definitions
    pass's workers make no trigram tables (0.1 s of numpy each): they take none."""
    if read:
        trigrams.tables()
    if define:
        importlib.import_module("tether.index.symbols")


def give_way() -> None:
    """A priority below the server's and the editor's: the pass takes the cores they leave
    idle, and a turn meanwhile waits on no worker."""
    with contextlib.suppress(OSError):
        if sys.platform == "win32":
            import ctypes

            kernel32 = ctypes.windll.kernel32
            kernel32.SetPriorityClass(kernel32.GetCurrentProcess(), _BELOW_NORMAL)
        else:
            os.nice(NICENESS)


def quiet() -> None:
    """First thing in a worker: its standard output, the editor's channel, is pointed at
    the null device."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.close(null)
    sys.stdout = sys.stderr


async def read(
    root: Path,
    db: Database,
    batches: Sequence[list[Path]],
    gone: Iterable[bytes],
    define: bool,
    workers: Workers | None,
    going_on: Callable[[int], bool],
) -> None:
    """Read the batches into ``db`` (``gone`` dropped with the first recorded), telling
    ``going_on`` how many files are in after each (False: stop there). Without
    ``workers``, each in turn on a thread; in ``workers``, as many at once as there are
    workers, each writing its documents into a shard no other batch is writing
    (``Database.shards``), and recorded by the server as each is done."""
    done = 0
    if workers is None:
        for paths in batches:
            batch = await asyncio.to_thread(reads.examined, root, paths, define)
            await in_thread(reads.record, db, batch, gone)
            gone = ()
            done += len(batch.seen) + len(batch.lost)
            if not going_on(done):
                return
        return
    free = await in_thread(db.shards, workers.count)
    first_doc = await in_thread(db.reserve, sum(map(len, batches)))
    waiting = deque(batches)
    running: dict[asyncio.Future[reads.Batch], Path] = {}  # each batch, and its shard

    def start() -> None:
        nonlocal first_doc
        while waiting and free:
            paths, shard = waiting.popleft(), free.pop()
            into = _examined(workers, root, paths, define, shard, first_doc)
            running[asyncio.ensure_future(into)] = shard
            first_doc += len(paths)

    try:
        start()
        while running:
            finished, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
            for task in finished:
                free.append(running.pop(task))
            start()  # the next batches are read while these are recorded
            for task in finished:
                batch = task.result()
                await in_thread(reads.record, db, batch, gone)
                gone = ()
                done += len(batch.seen) + len(batch.lost)
                if not going_on(done):
                    return
    finally:
        for pending in running:
            pending.cancel()
        await asyncio.gather(*running, return_exceptions=True)


async def _examined(
    workers: Workers, root: Path, paths: list[Path], define: bool, shard: Path, first_doc: int
) -> reads.Batch:
    try:
        return await workers.run(reads.examined_into, root, paths, define, shard, first_doc)
    except BrokenProcessPool:
        log.warning("a worker reading %d files died; they are read again here", len(paths))
        # Without their definitions: its parser may be what died.
        return await asyncio.to_thread(reads.examined, root, paths, False)


async def define(root: Path, db: Database, size: int, workers: Workers | None) -> int:
    """Take the definitions of up to ``size`` files not parsed yet, split among the
    workers (without, on a thread); how many there were."""
    if workers is None:
        return await in_thread(reads.define_batch, root, db, size)
    rels = await in_thread(db.unparsed, size)
    parts = [rels[start :: workers.count] for start in range(workers.count)]
    found = await asyncio.gather(*(_defined(workers, root, part) for part in parts if part))
    await in_thread(db.put_definitions, [pair for part in found for pair in part])
    return len(rels)


async def _defined(workers: Workers, root: Path, rels: list[bytes]) -> reads.Defined:
    try:
        return await workers.run(reads.defined, root, rels)
    except BrokenProcessPool:
        log.warning("a worker parsing %d files died; they keep no definitions", len(rels))
        return [(rel, []) for rel in rels]
