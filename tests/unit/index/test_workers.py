"""Worker processes for a long pass: the same index as the server's threads build, nothing
printed to the editor's channel, and a worker that dies costs its batch only."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.support import dying, imported
from tests.unit.tools import write
from tether.index import freshness, postings, reads, workers, workspace
from tether.index.database import Database, Seen
from tether.index.reading import MAX_INDEXED_BYTES, relative, workspace_files
from tether.index.shards import files as shard_files
from tether.index.trigrams import document, numbered
from tether.index.workspace import WorkspaceIndex
from tether.tools.index_view import Symbols

T = TypeVar("T")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = (tmp_path / "tree").resolve()
    for n in range(30):
        write(root, f"pkg{n % 3}/m{n}.py", f"class Thing{n}:\n    def run_{n}(self): pass\n")
        write(root, f"notes/n{n}.txt", f"marker_{n} and shared_word\n")
    write(root, "image.bin", b"\x00marker_1")
    write(root, "late.txt", b"marker_2\n" + b"x" * 9000 + b"\x00")
    write(root, "big.txt", "y" * (MAX_INDEXED_BYTES + 1))
    write(root, "app.ts", "export function startApp(): void {}\n")
    return root


def content(path: Path) -> tuple[list[tuple[object, ...]], ...]:
    db = sqlite3.connect(path)
    try:
        tables = (
            "SELECT path, doc IS NULL, mtime_ns, size, kind, parsed FROM files ORDER BY path",
            "SELECT path, line, name, kind FROM symbols ORDER BY path, line, name",
        )
        return tuple(db.execute(sql).fetchall() for sql in tables)
    finally:
        db.close()


async def build(tree: Path, path: Path) -> WorkspaceIndex:
    index = WorkspaceIndex(tree, path)
    await index.build()
    index.follow()
    return index


async def test_workers_build_the_index_the_servers_threads_build(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads = await build(tree, tmp_path / "threads.sqlite3")
    monkeypatch.setattr(workers, "FROM_FILES", 1)
    monkeypatch.setattr(workspace, "WORKER_BATCH", 7)  # several batches, some read ahead
    started: list[int] = []
    monkeypatch.setattr(workers.Workers, "_start", _counting(started))
    processes = await build(tree, tmp_path / "processes.sqlite3")
    assert started == [workers.cores()] * 2  # the cores read for the build, then parse
    for pattern in ("marker_7", "shared_word", "Thing1", r"run_\d+"):
        found = await processes.candidates(pattern, False)
        assert found is not None
        assert sorted(found) == sorted(await threads.candidates(pattern, False) or [])
    symbols = await processes.symbols("startApp", None, tree, {})
    assert symbols is not None
    assert [(hit.name, hit.kind) for hit in symbols.hits] == [("startApp", "function")]
    await threads.close()
    await processes.close()
    assert content(tmp_path / "processes.sqlite3") == content(tmp_path / "threads.sqlite3")


async def test_a_long_passs_workers_start_while_the_walk_still_finds_files(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The workers are started once the walk has found ``FROM_FILES`` files to read, not
    once it has ended (each takes ~0.2 s to start, beside a walk of 0.3-0.6 s on the
    bench's big tree); a pass that finds fewer starts none."""
    walked = workspace_files
    found_then: list[int] = []
    count = [0]

    def walking(root: Path) -> Iterator[Path]:
        for path in walked(root):
            count[0] += 1
            yield path
            if count[0] == 10:  # the loop's turn to start them (asked from this thread)
                time.sleep(0.5)

    def started(self: workers.Workers) -> ProcessPoolExecutor:
        found_then.append(count[0])
        return start(self)

    start = workers.Workers._start
    monkeypatch.setattr(freshness, "workspace_files", walking)
    monkeypatch.setattr(workers.Workers, "_start", started)
    monkeypatch.setattr(workers, "FROM_FILES", 5)
    index = WorkspaceIndex(tree, tmp_path / "index.sqlite3")
    await index.build(define=False)
    await index.close()
    assert count[0] > 60 and len(found_then) == 1 and 5 <= found_then[0] <= 10

    monkeypatch.setattr(workers, "FROM_FILES", 1000)
    found_then.clear()
    index = WorkspaceIndex(tree, tmp_path / "small.sqlite3")
    await index.build(define=False)
    await index.close()
    assert found_then == []


async def test_workers_that_cannot_start_ahead_leave_the_pass_to_its_first_batch(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Starting the workers ahead is asked from the walk's thread, and runs as a callback
    of the loop: a failure there (no process could start) is no error of the loop's; the
    pass goes on, and its first batch meets the failure as it always did."""

    def refused(self: workers.Workers, ready: object) -> None:
        raise OSError("no process for you")

    monkeypatch.setattr(workers.Workers, "warm", refused)
    monkeypatch.setattr(workers, "FROM_FILES", 1)
    with caplog.at_level(logging.DEBUG):
        index = await build(tree, tmp_path / "index.sqlite3")
    assert await found(index, "marker_7") == {b"notes/n7.txt"}
    await index.close()
    assert "Exception in callback" not in caplog.text
    assert "could not start ahead of the pass: no process for you" in caplog.text


async def test_a_walk_that_outlives_its_pass_starts_no_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A pass cancelled while its walk runs on (a thread goes on however it is awaited) is
    over: the walk's late ask starts no worker that nothing would ever stop."""
    monkeypatch.setattr(workers, "FROM_FILES", 1)
    started: list[int] = []
    monkeypatch.setattr(workers.Workers, "_start", _counting(started))
    async with workers.for_pass(1, partial(workers.ready, True, False)) as long_pass:
        pass
    await asyncio.to_thread(long_pass.expect, 5)  # from the walk's thread, after the end
    await asyncio.sleep(0)  # the loop runs what the thread asked of it
    assert long_pass.workers is None and started == []


async def test_a_reading_worker_starts_without_the_parsers_or_the_tools_models(
    tree: Path,
) -> None:
    """A worker reading a long pass's files imports neither tree-sitter nor pydantic (the
    tools' models and settings): 0.2 s of each worker's start."""
    pool = workers.Workers(1)
    try:
        pool.warm(partial(workers.ready, True, False))
        paths = sorted(tree.rglob("*.py"))
        await pool.run(reads.examined, tree, paths, False)
        loaded = await pool.run(imported.among, ("tree_sitter", "pydantic", "tether"))
    finally:
        await pool.close()
    assert "tether.index.trigrams" in loaded
    assert [name for name in loaded if name.startswith(("tree_sitter", "pydantic"))] == []


async def test_each_pass_makes_its_workers_ready_for_its_own_batches(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reading pass's workers make the trigrams' tables ready; the definitions pass's
    the parsers, and no tables (0.1 s of numpy each, for nothing)."""
    asked: list[tuple[object, ...]] = []
    warm = workers.Workers.warm

    def noted(self: workers.Workers, ready: Callable[[], None]) -> None:
        assert isinstance(ready, partial)
        asked.append(ready.args)
        warm(self, ready)

    monkeypatch.setattr(workers.Workers, "warm", noted)
    monkeypatch.setattr(workers, "FROM_FILES", 1)
    index = await build(tree, tmp_path / "index.sqlite3")
    await index.close()
    assert asked == [(True, False), (False, True)]

    pool = workers.Workers(1)
    try:
        pool.warm(partial(workers.ready, False, True))
        loaded = await pool.run(imported.among, ("numpy", "tree_sitter", "tether.index.symbols"))
    finally:
        await pool.close()
    assert "tether.index.symbols" in loaded and "numpy" not in loaded


def _counting(started: list[int]) -> Callable[[workers.Workers], ProcessPoolExecutor]:
    """``Workers._start``, noting how many workers each pool has."""
    start = workers.Workers._start

    def counted(self: workers.Workers) -> ProcessPoolExecutor:
        started.append(self.count)
        return start(self)

    return counted


async def test_nothing_a_worker_prints_reaches_the_servers_standard_output(
    capfd: pytest.CaptureFixture[str],
) -> None:
    pool = workers.Workers(1)
    try:
        await pool.run(print, "a worker's print, meant for no one")
        await pool.run(os.write, 1, b"and a write to its fd 1\n")
    finally:
        await pool.close()
    assert capfd.readouterr().out == ""


@pytest.mark.skipif(sys.platform == "win32", reason="a niceness is POSIX's")
async def test_a_worker_gives_way_to_the_server() -> None:
    """A worker runs below the server's priority: a long pass takes the cores the server
    and the editor leave idle (a process counting beside a cold build of the bench's big
    tree got 0.98 of a core so, 0.87 at the same priority)."""
    pool = workers.Workers(1)
    try:
        theirs = await pool.run(os.getpriority, os.PRIO_PROCESS, 0)
    finally:
        await pool.close()
    assert theirs == min(19, os.getpriority(os.PRIO_PROCESS, 0) + workers.NICENESS)


async def test_a_worker_that_dies_is_replaced_for_the_next_call() -> None:
    pool = workers.Workers(1)
    try:
        with pytest.raises(BrokenProcessPool):
            await pool.run(dying.dies)
        assert await pool.run(sum, [1, 2, 3]) == 6
    finally:
        await pool.close()


async def test_files_whose_parser_died_keep_no_definitions_and_the_pass_goes_on(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(workers, "FROM_FILES", 1)
    monkeypatch.setattr(reads, "defined", dying.dies)  # handed to the workers by name
    with caplog.at_level(logging.WARNING, logger=workers.__name__):
        index = await build(tree, tmp_path / "index.sqlite3")
    assert index.defined
    assert await index.symbols("Thing1", None, tree, {}) == Symbols([])
    assert "they keep no definitions" in caplog.text
    assert await index.candidates("Thing1", False) is not None  # the trigrams are all in
    await index.close()
    parsed = sqlite3.connect(tmp_path / "index.sqlite3").execute(
        "SELECT count(*) FROM files WHERE kind = 'text' AND parsed = 0"
    )
    assert parsed.fetchone()[0] == 0


class DiesOnce(workers.Workers):
    """Workers whose first call kills its worker for real, as a parser crashing would."""

    died = False

    async def run(self, function: Callable[..., T], *args: object) -> T:
        if not self.died:
            self.died = True
            await super().run(dying.dies)
        return await super().run(function, *args)


async def test_batches_whose_reader_died_are_read_again_without_their_definitions(
    tree: Path, tmp_path: Path
) -> None:
    paths = sorted(tree.rglob("*.py"))
    batches = [paths[:10], paths[10:20], paths[20:]]
    db = Database(tmp_path / "index.sqlite3")
    pool = DiesOnce(1)
    try:
        await workers.read(tree, db, batches, (), True, pool, lambda done: True)
    finally:
        await pool.close()
    assert pool.died
    parsed = dict(db.db.execute("SELECT path, parsed FROM files").fetchall())
    first, second = ({relative(tree, path) for path in batch} for batch in batches[:2])
    assert len(parsed) == len(paths)
    # The batches in flight when it died (the one read ahead too) keep no definitions.
    assert first <= {bytes(rel) for rel, done in parsed.items() if not done} <= first | second
    db.close()


async def test_a_worker_reads_its_next_batch_while_the_server_records_the_last(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A worker that hands a batch back is given the next one at once: it once sat idle
    while the server recorded the batch it had just read."""
    said: list[tuple[str, bytes]] = []
    examined, recorded = workers._examined, reads.record

    def handed(pool: workers.Workers, root: Path, paths: list[Path], *rest: Any) -> Any:
        said.append(("read", relative(root, paths[0])))
        return examined(pool, root, paths, *rest)

    def record(db: Database, batch: reads.Batch, gone: Iterable[bytes] = ()) -> None:
        said.append(("record", batch.seen[0].rel))
        recorded(db, batch, gone)

    monkeypatch.setattr(workers, "_examined", handed)
    monkeypatch.setattr(reads, "record", record)
    paths = sorted(tree.rglob("*.py"))
    batches = [paths[:10], paths[10:20], paths[20:]]
    first, second = (relative(tree, batch[0]) for batch in batches[:2])
    db = Database(tmp_path / "index.sqlite3")
    pool = workers.Workers(1)
    try:
        await workers.read(tree, db, batches, (), False, pool, lambda _: True)
    finally:
        await pool.close()
        db.close()
    assert said.index(("read", second)) < said.index(("record", first))


async def test_a_long_pass_writes_its_documents_into_shards_that_searches_ask(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker writes its batches into a shard of its own, side by side (one database
    takes one writer at a time), a segment of posting lists each, in pages of 64 KiB; a
    question counts them towards its bound as it counts FTS5's documents. A file changed
    later gets a document in the database itself; its old one, in a shard, is no longer
    found. Starting afresh (too much garbage) removes the shards; an unreadable database is
    built anew without them."""
    monkeypatch.setattr(workers, "FROM_FILES", 1)
    monkeypatch.setattr(workspace, "WORKER_BATCH", 7)
    path = tmp_path / "index.sqlite3"
    index = await build(tree, path)
    named = Database(path)
    for name in named.shards(workers.cores()):  # every shard holds segments
        shard = sqlite3.connect(name)
        segments = shard.execute("SELECT count(*) FROM postings").fetchone()[0]
        assert segments > 1  # a segment a batch of 7
        assert shard.execute("PRAGMA page_size").fetchone() == (postings.PAGE_BYTES,)
        shard.close()
    shared = [["sha", "har", "are", "red", "wor", "ord"]]
    assert named.matching(shared, 10, 0.0) is None  # 30 files, more than 10
    rows = named.matching(shared, 100, 0.0)
    assert rows is not None and {f"notes/n{n}.txt".encode() for n in range(30)} <= dict(rows).keys()
    named.close()
    assert await found(index, "marker_7") == {b"notes/n7.txt"}
    write(tree, "notes/n7.txt", "rewritten_marker\n")
    index.changed([tree / "notes/n7.txt"])
    assert await found(index, "marker_7") == set()
    assert await found(index, "rewritten_marker") == {b"notes/n7.txt"}
    await index.close()

    reopened = Database(path)
    reopened.clear()
    reopened.close()
    assert shard_files(path) == []

    index = await build(tree, path)
    await index.close()
    assert shard_files(path)
    path.write_bytes(b"not a database at all" * 100)
    index = await build(tree, path)
    assert await index.candidates("shared_word", False) is not None
    await index.close()


async def test_documents_in_a_shard_that_no_file_names_change_no_answer(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A crash between a shard's commit and the server's leaves documents no file names
    (the shard is written first): searches do not see them, and they are never reused."""
    monkeypatch.setattr(workers, "FROM_FILES", 1)
    path = tmp_path / "index.sqlite3"
    index = await build(tree, path)
    await index.close()
    db = Database(path)
    first = db.reserve(1)
    shard = db.shards(workers.cores())[0]
    db.close()
    assert into_shard(shard, [(b"ghost.txt", b"orphan_marker")], first)[0].doc == first
    index = await build(tree, path)
    assert await found(index, "orphan_marker") == set()
    await index.close()
    db = Database(path)
    assert db.reserve(1) > first
    db.close()


def into_shard(shard: Path, files: list[tuple[bytes, bytes]], first: int) -> list[Seen]:
    """Text files written into ``shard`` as a worker writes a segment (numbered from
    ``first``): the files as the server then records them."""
    numbers = [grams for _, grams in numbered(files, lambda file: file[1])]
    postings.write(shard, first, postings.segment(numbers))
    return [Seen(rel, 1, len(text), "text", None, first + n) for n, (rel, text) in enumerate(files)]


async def found(index: WorkspaceIndex, word: str) -> set[bytes]:
    """The candidates for ``word`` but the files searched whatever the pattern."""
    files = await index.candidates(word, False)
    assert files is not None
    return set(files) - {b"big.txt", b"late.txt"}


def test_a_second_server_of_the_index_follows_the_shards_the_first_names(tmp_path: Path) -> None:
    """Two editor windows on one workspace share its index: the shards one server's
    workers write, named after the other opened it, are searched by both; and once the
    index starts again from nothing (a new set of shards), neither searches the old set."""
    path = tmp_path / "index.sqlite3"
    first, second = Database(path), Database(path)
    shard = first.shards(2)[1]
    seen = [(b"a.py", b"shared_marker"), (b"b.py", b"other")]
    first.put(into_shard(shard, seen, first.reserve(len(seen))))
    branches = [["sha", "har", "are", "red"]]
    assert second.matching(branches, 10, 1.0) == [(b"a.py", "text")]

    first.clear()
    assert second.matching(branches, 10, 1.0) == []
    shard = first.shards(2)[0]
    moved = [(b"c.py", b"shared_marker")]
    first.put(into_shard(shard, moved, first.reserve(len(moved))))
    assert second.matching(branches, 10, 1.0) == [(b"c.py", "text")]
    assert first.matching(branches, 10, 1.0) == [(b"c.py", "text")]
    first.close()
    second.close()


def test_a_question_bounds_the_documents_of_shards_and_database_together(
    tmp_path: Path,
) -> None:
    """Documents in shards (a long pass's) and in the database (files read after) are
    counted together against a question's bound: over it, the index says None."""
    db = Database(tmp_path / "index.sqlite3")
    shard = db.shards(2)[0]
    passed = [(f"pass{n}.py".encode(), b"bounded_marker") for n in range(3)]
    db.put(into_shard(shard, passed, db.reserve(len(passed))))
    db.put(
        [Seen(f"late{n}.py".encode(), 1, 9, "text", document(b"bounded_marker")) for n in (0, 1)]
    )
    branches = [["bou", "oun", "und", "nde", "ded"]]
    rows = db.matching(branches, 5, 0.0)
    assert rows is not None and len(rows) == 5
    assert db.matching(branches, 4, 0.0) is None  # 3 + 2 documents: one too many
    assert db.matching(branches, 2, 0.0) is None  # the shards' alone are too many
    db.close()
