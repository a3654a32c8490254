"""The workspace index: what it holds, what it answers, and how it stays fresh."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from filelock import FileLock

from tests.unit.tools import git, init_repo, write
from tether.index import build_lock, workspace
from tether.index import names as index_names
from tether.index.database import Database, Seen
from tether.index.reading import MAX_INDEXED_BYTES
from tether.index.workspace import BATCH, WorkspaceIndex


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "ws").resolve()
    write(root, ".gitignore", "*.log\n")
    write(root, "a.py", "def alpha_marker():\n    pass\n")
    write(root, "sub/b.py", "beta_marker = 1\n")
    write(root, "debug.log", "alpha_marker in an ignored file\n")
    write(root, "image.bin", b"\x00alpha_marker")
    write(root, "late.txt", b"alpha_marker\n" + b"x" * 9000 + b"\x00")
    write(root, "wide.txt", "\ufeffalpha_marker\n".encode("utf-16"))
    write(root, "big.txt", "y" * (MAX_INDEXED_BYTES + 1))
    (root / "link.py").symlink_to(root / "a.py")
    return root


async def built(ws: Path, path: Path) -> WorkspaceIndex:
    index = WorkspaceIndex(ws, path)
    await index.build()
    index.follow()
    return index


def names(ws: Path, files: list[bytes] | None) -> set[str]:
    assert files is not None
    return {name.decode() for name in files}


async def test_it_holds_the_walks_files_by_kind(ws: Path, tmp_path: Path) -> None:
    index = await built(ws, tmp_path / "index.sqlite3")
    await index.close()
    kinds = {
        rel.decode(): kind
        for rel, kind in Database(tmp_path / "index.sqlite3")
        .db.execute("SELECT path, kind FROM files")
        .fetchall()
    }
    assert kinds == {
        ".gitignore": "text",
        "a.py": "text",
        "sub/b.py": "text",
        "image.bin": "binary",
        "late.txt": "late",
        "wide.txt": "wide",
        "big.txt": "big",
    }


async def test_candidates_are_the_files_holding_the_trigrams_and_those_always_searched(
    ws: Path, tmp_path: Path
) -> None:
    index = await built(ws, tmp_path / "index.sqlite3")
    assert names(ws, await index.candidates("beta_mark", False)) == {
        "sub/b.py",
        "wide.txt",
        "big.txt",
    }
    assert await index.candidates("alpha_marker", False) is None  # late.txt: ripgrep's walk
    assert await index.candidates(r"\w+", False) is None  # nothing to narrow by


async def test_it_answers_only_once_built_and_following_changes(ws: Path, tmp_path: Path) -> None:
    index = WorkspaceIndex(ws, tmp_path / "index.sqlite3")
    assert await index.candidates("beta_mark", False) is None
    await index.build()
    assert await index.candidates("beta_mark", False) is None  # nobody tells it of changes
    index.follow()
    assert await index.candidates("beta_mark", False) is not None


async def test_it_names_the_files_kept_once_it_answers(ws: Path, tmp_path: Path) -> None:
    index = WorkspaceIndex(ws, tmp_path / "index.sqlite3")
    await index.build()
    assert await index.kept() is None  # nobody tells it of changes
    index.follow()
    first = await index.kept()
    assert first is not None
    files = {".gitignore", "a.py", "sub/b.py", "image.bin", "late.txt", "wide.txt", "big.txt"}
    assert first.files == files  # no link, nothing ignored
    assert first.dirs == {"sub"}
    assert await index.kept() is first  # made once for each state of the index
    write(ws, "sub/deeper/c.py", "")
    index.changed([ws / "sub/deeper/c.py"])
    after = await index.kept()
    assert after is not None and after.files == files | {"sub/deeper/c.py"}
    assert after.dirs == {"sub", "sub/deeper"}
    await index.close()


async def test_a_change_told_is_applied_before_the_next_search(ws: Path, tmp_path: Path) -> None:
    index = await built(ws, tmp_path / "index.sqlite3")
    write(ws, "new/c.py", "gamma_marker\n")
    assert names(ws, await index.candidates("gamma_marker", False)) == {"wide.txt", "big.txt"}
    index.changed([ws / "new/c.py"])
    assert "new/c.py" in names(ws, await index.candidates("gamma_marker", False))
    (ws / "new/c.py").unlink()
    index.changed([ws / "new/c.py"])
    assert "new/c.py" not in names(ws, await index.candidates("gamma_marker", False))


async def test_a_search_of_many_files_has_the_map_naming_them_made_after_it(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Made in the background once a search named many documents (``names.MANY``), used
    by the searches after it, and made again after a change only once one wants it."""
    monkeypatch.setattr(index_names, "MANY", 1)
    index = await built(ws, tmp_path / "index.sqlite3")
    assert index._db is not None
    expected = {"sub/b.py", "wide.txt", "big.txt"}
    assert names(ws, await index.candidates("beta_mark", False)) == expected
    assert index._naming is not None
    await index._naming
    assert not index._db.names.wanted
    files = index._db.names.db
    monkeypatch.setattr(index._db.names, "db", None)  # the map alone names the documents
    assert names(ws, await index.candidates("beta_mark", False)) == expected
    monkeypatch.setattr(index._db.names, "db", files)
    write(ws, "sub/b.py", "gamma_marker = 1\n")
    index.changed([ws / "sub/b.py"])
    assert names(ws, await index.candidates("beta_mark", False)) == {"wide.txt", "big.txt"}
    assert index._naming is not None  # wanted again: the map was of the index before
    await index._naming
    monkeypatch.setattr(index._db.names, "db", None)
    assert names(ws, await index.candidates("gamma_mark", False)) == expected
    monkeypatch.setattr(index._db.names, "db", files)
    await index.close()


async def test_a_question_cancelled_in_its_thread_holds_the_lock_until_the_thread_ends(
    ws: Path, tmp_path: Path
) -> None:
    """A search's call cancelled with its turn while its question runs in a thread: the
    index's lock, and with it its one connection, is given up once that thread is done,
    not to the next question beside it (``in_thread``)."""
    index = await built(ws, tmp_path / "index.sqlite3")
    inside, go = threading.Event(), threading.Event()

    def slow(db: Database) -> str:
        inside.set()
        go.wait(10)
        return "slow"

    task = asyncio.ensure_future(index._asked(slow))  # not light: asked in a thread
    while not inside.is_set():
        await asyncio.sleep(0.005)
    task.cancel()
    await asyncio.sleep(0.05)
    assert index._lock.locked() and not task.done()
    go.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not index._lock.locked()
    expected = {"sub/b.py", "wide.txt", "big.txt"}
    assert names(ws, await index.candidates("beta_mark", False)) == expected
    await index.close()


async def test_a_directory_removed_or_moved_in_is_applied_whole(ws: Path, tmp_path: Path) -> None:
    index = await built(ws, tmp_path / "index.sqlite3")
    shutil.move(ws / "sub", ws / "moved")
    index.changed([ws / "sub", ws / "moved"])
    assert "moved/b.py" in names(ws, await index.candidates("beta_marker", False))
    assert "sub/b.py" not in names(ws, await index.candidates("beta_marker", False))


async def test_a_gitignore_changed_walks_the_workspace_again(ws: Path, tmp_path: Path) -> None:
    index = await built(ws, tmp_path / "index.sqlite3")
    write(ws, ".gitignore", "*.log\nsub/\n")
    index.changed([ws / ".gitignore"])
    assert await index.candidates("beta_marker", False) is None  # walking: ripgrep answers
    await index.settled()
    assert "sub/b.py" not in names(ws, await index.candidates("beta_marker", False))


async def test_at_start_only_the_files_changed_since_are_read(ws: Path, tmp_path: Path) -> None:
    first = await built(ws, tmp_path / "index.sqlite3")
    await first.close()
    write(ws, "a.py", "def alpha_changed():\n    pass\n")
    (ws / "sub/b.py").unlink()
    again = await built(ws, tmp_path / "index.sqlite3")
    assert again.last_build["read"] == 1
    assert "a.py" in names(ws, await again.candidates("alpha_changed", False))
    assert "sub/b.py" not in names(ws, await again.candidates("beta_marker", False))


def commit(ws: Path) -> None:
    git(ws, "add", "-A")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "c")


async def test_in_a_git_workspace_git_says_what_to_read_again(ws: Path, tmp_path: Path) -> None:
    commit(ws)
    first = await built(ws, tmp_path / "index.sqlite3")
    await first.close()
    write(ws, "a.py", "def alpha_edited():\n    pass\n")  # modified
    write(ws, "new.py", "untracked_marker = 1\n")  # untracked
    (ws / "sub/b.py").unlink()  # deleted
    write(ws, "committed.py", "committed_marker = 1\n")
    commit(ws)  # and a commit on top: HEAD moved
    write(ws, "after.py", "after_marker = 1\n")
    again = await built(ws, tmp_path / "index.sqlite3")
    assert again.last_build["by_git"] is True
    assert again.last_build["read"] == 4  # a.py, new.py, committed.py, after.py: no walk
    for marker, name in [
        ("alpha_edited", "a.py"),
        ("untracked_marker", "new.py"),
        ("committed_marker", "committed.py"),
        ("after_marker", "after.py"),
    ]:
        assert name in names(ws, await again.candidates(marker, False))
    assert "sub/b.py" not in names(ws, await again.candidates("beta_marker", False))


async def test_an_ignore_file_changed_while_away_walks_again(ws: Path, tmp_path: Path) -> None:
    commit(ws)
    first = await built(ws, tmp_path / "index.sqlite3")
    await first.close()
    write(ws, ".gitignore", "*.log\nsub/\n")
    again = await built(ws, tmp_path / "index.sqlite3")
    assert again.last_build["by_git"] is False
    assert "sub/b.py" not in names(ws, await again.candidates("beta_marker", False))


class ClosesAfterFirstBatch:
    """A progress that stops the server as soon as the first batch is committed."""

    def __init__(self, index: WorkspaceIndex) -> None:
        self.index = index
        self.closing: asyncio.Future[None] | None = None

    def begin(self, title: str) -> None:
        pass

    def report(self, message: str, percentage: int) -> None:
        if self.closing is None:
            self.closing = asyncio.ensure_future(self.index.close())

    def end(self, message: str) -> None:
        pass


async def test_closing_stops_a_build_after_its_batch_and_the_next_start_reads_the_rest(
    tmp_path: Path,
) -> None:
    ws = (tmp_path / "many").resolve()
    for n in range(BATCH * 2 + 10):
        write(ws, f"f{n:04}.txt", f"file {n}\n")
    index = WorkspaceIndex(ws, tmp_path / "index.sqlite3")
    progress = ClosesAfterFirstBatch(index)
    await asyncio.wait_for(index.build(progress), 30)
    assert progress.closing is not None
    await progress.closing
    again = WorkspaceIndex(ws, tmp_path / "index.sqlite3")
    await again.build()
    assert 0 < again.last_build["read"] < BATCH  # only what the stopped build had not read


async def test_a_directory_made_in_an_ignored_place_is_not_indexed(
    ws: Path, tmp_path: Path
) -> None:
    index = await built(ws, tmp_path / "index.sqlite3")
    write(ws, ".gitignore", "*.log\nbuild/\n")
    await index.settled()
    index.changed([ws / ".gitignore"])
    await index.settled()
    write(ws, "build/out.py", "built_marker = 1\n")
    index.changed([ws / "build"])
    assert "build/out.py" not in names(ws, await index.candidates("built_marker", False))
    write(ws, "kept/in.py", "built_marker = 2\n")
    index.changed([ws / "kept"])
    assert "kept/in.py" in names(ws, await index.candidates("built_marker", False))


async def test_an_unreadable_index_is_built_anew(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "index.sqlite3").write_bytes(b"not a database at all" * 100)
    index = await built(ws, tmp_path / "index.sqlite3")
    assert index.ready
    assert "sub/b.py" in names(ws, await index.candidates("beta_marker", False))


async def test_an_index_of_the_schema_before_is_built_anew(ws: Path, tmp_path: Path) -> None:
    """Schema 4 kept a long pass's documents in shards of FTS5 tables, which schema 5's
    searches do not read (its shards hold posting lists): reopened, the index is read
    again from nothing, and the old shards are deleted."""
    path = tmp_path / "index.sqlite3"
    old = sqlite3.connect(path)
    old.executescript(
        "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID;"
        "INSERT INTO meta VALUES ('schema', '4'), ('walked', 'yes'), ('shards_of', 'old'),"
        " ('shards', '1');"
        "CREATE VIRTUAL TABLE grams USING fts5(body, tokenize=\"ascii tokenchars '_'\","
        " content='', detail='none');"
    )
    old.close()
    shard = sqlite3.connect(tmp_path / "index.sqlite3.grams-old-0")
    shard.execute("CREATE VIRTUAL TABLE grams USING fts5(body, content='', detail='none')")
    shard.close()
    index = await built(ws, path)
    db = Database(path)
    assert db.meta("schema") == "5" and db.meta("walked") is None
    assert not (tmp_path / "index.sqlite3.grams-old-0").exists()
    assert "sub/b.py" in names(ws, await index.candidates("beta_marker", False))
    db.close()
    await index.close()


async def test_a_pattern_most_files_may_hold_is_left_to_ripgreps_walk(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ALWAYS_NARROWED candidates and MAX_SHARE of the files, ripgrep's walk (which
    stops once its count is in) is as fast: the index says None."""
    for n in range(12):
        write(ws, f"many/m{n}.py", f"common_marker = {n}\n" + ("rare_marker\n" if n == 3 else ""))
    monkeypatch.setattr(workspace, "ALWAYS_NARROWED", 2)
    index = await built(ws, tmp_path / "index.sqlite3")  # most of its files hold it
    assert await index.candidates("common_marker", False) is None
    always = {"big.txt", "wide.txt"}  # searched whatever the pattern
    assert names(ws, await index.candidates("rare_marker", False)) == {"many/m3.py", *always}
    monkeypatch.setattr(workspace, "ALWAYS_NARROWED", 14)
    assert len(names(ws, await index.candidates("common_marker", False)) - always) == 12
    await index.close()


def test_the_count_of_files_follows_every_change(tmp_path: Path) -> None:
    db = Database(tmp_path / "index.sqlite3")
    assert db.count() == 0
    db.put([Seen(b"a.py", 1, 3, "text", "abc"), Seen(b"b.bin", 1, 3, "binary", None)])
    assert db.count() == 2
    db.put([], [b"a.py"])
    assert db.count() == 1
    db.clear()
    assert db.count() == 0
    db.close()


async def test_an_index_another_server_started_afresh_is_walked_again_before_it_answers(
    ws: Path, tmp_path: Path
) -> None:
    """Two editor windows on one workspace share its index. When one starts it again from
    nothing (too much garbage), the other no longer answers from what may be a partial
    rebuild: it runs ripgrep, walks again in the background, and answers after."""
    path = tmp_path / "index.sqlite3"
    first, second = await built(ws, path), await built(ws, path)
    assert "sub/b.py" in names(ws, await second.candidates("beta_marker", False))
    assert first._db is not None
    first._db.clear()  # as its build does past the garbage
    assert await second.candidates("beta_marker", False) is None
    await second.settled()
    assert "sub/b.py" in names(ws, await second.candidates("beta_marker", False))
    assert "sub/b.py" in names(ws, await first.candidates("beta_marker", False))
    await first.close()
    await second.close()


class Told:
    """A build's progress, as the editor is told it."""

    def __init__(self) -> None:
        self.said: list[str] = []

    def begin(self, title: str) -> None:
        self.said.append(title)

    def report(self, message: str, percentage: int) -> None:
        self.said.append(message)

    def end(self, message: str) -> None:
        self.said.append(message)


async def test_two_servers_of_one_index_build_it_once_the_second_waiting(
    ws: Path, tmp_path: Path
) -> None:
    """Two editor windows opened on a new workspace: the second's passes wait for the
    first's, then find nothing to read. (Both once read and wrote every file.)"""
    path = tmp_path / "index.sqlite3"
    first, second = WorkspaceIndex(ws, path), WorkspaceIndex(ws, path)
    told = Told()
    await asyncio.gather(first.build(), second.build(told))
    assert first.last_build["read"] == 7  # the walk's files
    assert second.last_build["read"] == 0
    assert "waiting for another tether window's build of this index" in told.said
    for index in (first, second):
        index.follow()
        assert "sub/b.py" in names(ws, await index.candidates("beta_marker", False))
        await index.close()


async def test_a_server_closing_while_it_waits_for_the_lock_stops_waiting(
    ws: Path, tmp_path: Path
) -> None:
    path = tmp_path / "index.sqlite3"
    other = FileLock(build_lock.path_of(path), thread_local=False)
    other.acquire()  # another server's build goes on
    index = WorkspaceIndex(ws, path)
    told = Told()
    waiting = asyncio.ensure_future(index.build(told))
    await asyncio.sleep(0.1)
    await index.close()
    async with asyncio.timeout(2 * build_lock.POLL_S + 1):
        await waiting
    assert told.said[-1] == "stopped" and not index.ready
    other.release()
    again = await built(ws, path)  # the lock is free again: the next start builds
    assert "sub/b.py" in names(ws, await again.candidates("beta_marker", False))
    await again.close()


async def test_where_no_lock_can_be_had_the_build_goes_on_without(ws: Path, tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    build_lock.path_of(path).mkdir(parents=True)  # a directory where the lock file belongs
    index = await built(ws, path)
    assert "sub/b.py" in names(ws, await index.candidates("beta_marker", False))
    await index.close()


async def test_only_a_build_starts_the_index_afresh_never_a_catch_up(
    ws: Path, tmp_path: Path
) -> None:
    """Past the garbage the index starts again from nothing: in a build, which holds the
    build lock, not in the quick pass a search makes after tether changed files (another
    server's build would lose its tables under it)."""
    path = tmp_path / "index.sqlite3"
    index = await built(ws, path)
    assert index._db is not None
    index._db.set_meta("garbage", "5000")
    before = index._db.meta("generation")
    index.unsure()  # a command ran: the next search catches up first
    write(ws, "c.py", "gamma_marker = 3\n")
    assert "c.py" in names(ws, await index.candidates("gamma_marker", False))
    assert index._db.meta("generation") == before
    await index.build()
    assert index._db.meta("generation") != before and index._db.garbage() == 0
    assert "c.py" in names(ws, await index.candidates("gamma_marker", False))
    await index.close()


@pytest.fixture
async def warm(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[tuple[WorkspaceIndex, list[str]]]:
    """A built index, and the functions sent to a thread from then on, by name."""
    index = await built(ws, tmp_path / "index.sqlite3")
    sent: list[str] = []
    to_thread = asyncio.to_thread

    async def counted(function: object, *args: object) -> object:
        sent.append(getattr(function, "__name__", repr(function)))
        return await to_thread(function, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio, "to_thread", counted)
    yield index, sent
    await index.close()


@pytest.mark.parametrize(("on_loop_files", "hops"), [(5_000, []), (0, ["_unless_afresh"] * 2)])
async def test_a_question_to_a_warm_index_is_answered_on_the_loop_or_in_one_hop_to_a_thread(
    ws: Path,
    warm: tuple[WorkspaceIndex, list[str]],
    monkeypatch: pytest.MonkeyPatch,
    on_loop_files: int,
    hops: list[str],
) -> None:
    """A small index is asked on the loop; a larger one in a thread, whether another
    server started it afresh being asked with the question itself: in a reply of many
    reads each hop to a thread and back waits for the GIL."""
    index, taken = warm
    monkeypatch.setattr(workspace, "ON_LOOP_FILES", on_loop_files)
    assert "sub/b.py" in names(ws, await index.candidates("beta_marker", False))
    assert await index.kept() is not None
    assert taken == hops


@pytest.mark.parametrize(
    ("pattern", "hops"),
    [
        ("beta_marker", []),
        ("|".join(f"beta_marker{n}?" for n in range(9)), ["_unless_afresh"]),
        ("beta_marker" + " *" * 500, ["required"]),
    ],
    ids=["short", "many alternatives", "long"],
)
async def test_only_a_short_question_is_asked_on_the_loop(
    ws: Path, warm: tuple[WorkspaceIndex, list[str]], pattern: str, hops: list[str]
) -> None:
    """A question of many alternatives (each costs the query ~0.3 ms) goes to a thread
    even for a small index, and a long pattern's trigrams are found in one: a model may
    send thousands, and the loop would not serve the editor meanwhile."""
    index, taken = warm
    assert "sub/b.py" in names(ws, await index.candidates(pattern, False))
    assert taken == hops


async def test_a_symbols_question_is_asked_in_a_thread_even_of_a_small_index(
    ws: Path, warm: tuple[WorkspaceIndex, list[str]]
) -> None:
    """It reads up to 20,000 definitions (10-28 ms for the standard library's): the loop
    would not serve the editor meanwhile."""
    index, taken = warm
    found = await index.symbols("beta", None, ws, {})
    assert found is not None and taken == ["_unless_afresh", "ranked"]
