"""tether's own file watcher: a real watch of a real temporary workspace, told to a real
index (one that also records what it was told)."""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path

import pytest

from tests.unit.tools import init_repo, write
from tether.index import watching
from tether.index.watching import Relevant, Watcher
from tether.index.workspace import WorkspaceIndex


class Recording(WorkspaceIndex):
    """The index, and every path it was told of."""

    def __init__(self, workspace: Path, path: Path) -> None:
        super().__init__(workspace, path)
        self.told: list[Path] = []

    def changed(self, paths: Iterable[Path]) -> None:
        paths = list(paths)
        self.told += paths
        super().changed(paths)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "ws").resolve()
    write(root, ".gitignore", "*.log\nnode_modules/\n")
    write(root, "a.py", "alpha = 1\n")
    write(root, "node_modules/pkg/index.js", "ignored = 1\n")
    return root


@pytest.fixture
async def watched(ws: Path, tmp_path: Path) -> AsyncIterator[tuple[Recording, Watcher]]:
    index = Recording(ws, tmp_path / "index.sqlite3")
    watcher = Watcher(index)
    assert await watcher.start()
    await index.build()
    index.follow()
    yield index, watcher
    await watcher.stop()
    await index.close()


async def eventually(check: Callable[[], bool], seconds: float = 5) -> None:
    async with asyncio.timeout(seconds):
        while not check():
            await asyncio.sleep(0.02)


async def found(index: WorkspaceIndex, ws: Path, word: str) -> set[str]:
    files = await index.candidates(word, False)
    assert files is not None
    return {name.decode() for name in files}


async def search_until(index: WorkspaceIndex, ws: Path, word: str, rel: str, held: bool) -> None:
    """Search until ``rel`` is (``held``) or is not among the candidates for ``word``."""
    async with asyncio.timeout(5):
        while (rel in await found(index, ws, word)) != held:
            await asyncio.sleep(0.02)


async def test_a_created_changed_or_deleted_file_is_told_and_found(
    watched: tuple[Recording, Watcher], ws: Path
) -> None:
    index, _ = watched
    # In a new directory: its files may be written before its own watch is in place, so
    # the directory is what is told (and the index reads what is in it).
    write(ws, "sub/new.py", "fresh_marker_w = 1\n")
    await search_until(index, ws, "fresh_marker_w", "sub/new.py", held=True)
    assert {ws / "sub", ws / "sub/new.py"} & set(index.told)

    index.told.clear()
    write(ws, "a.py", "changed_marker_w = 2\n")
    await search_until(index, ws, "changed_marker_w", "a.py", held=True)
    assert ws / "a.py" in index.told

    index.told.clear()
    (ws / "sub/new.py").unlink()
    await search_until(index, ws, "fresh_marker_w", "sub/new.py", held=False)
    assert ws / "sub/new.py" in index.told


async def test_changes_in_ignored_directories_and_in_git_are_not_told(
    watched: tuple[Recording, Watcher], ws: Path
) -> None:
    index, _ = watched
    write(ws, "node_modules/pkg/index.js", "still_ignored = 2\n")
    write(ws, "node_modules/other/deep/x.js", "new_but_ignored = 3\n")
    write(ws, "debug.log", "ignored file\n")
    write(ws, ".git/scratch", "git's own\n")
    write(ws, "seen.py", "a change told after the others\n")
    await eventually(lambda: ws / "seen.py" in index.told)
    await asyncio.sleep(0.2)  # anything told with the ignored writes has arrived by now
    told = {path.relative_to(ws).as_posix() for path in index.told}
    assert not {t for t in told if t.startswith(("node_modules", ".git/"))}
    assert "debug.log" not in told


def test_relevant_leaves_out_what_the_walk_never_holds(ws: Path) -> None:
    relevant = Relevant(ws)
    assert relevant(ws / "a.py")
    assert relevant(ws / "sub/dir/new.py")  # in a directory that does not exist yet
    assert relevant(ws / ".git/info/exclude")  # it changes which files belong
    assert relevant(ws / ".gitignore")
    assert not relevant(ws / ".git/index")
    assert not relevant(ws / "vendored/.git/HEAD")
    assert not relevant(ws / "node_modules/pkg/index.js")
    assert not relevant(ws / "node_modules")  # the directory itself: it is ignored
    assert not relevant(ws / "debug.log")
    assert not relevant(ws / "node_modules/pkg/.gitignore")  # would walk everything again
    assert not relevant(ws)
    assert not relevant(ws.parent / "elsewhere.py")


def test_relevant_judges_again_once_an_ignore_file_changes(ws: Path) -> None:
    relevant = Relevant(ws)
    assert not relevant(ws / "node_modules/pkg/index.js")
    write(ws, ".gitignore", "*.log\n")
    assert relevant(ws / ".gitignore")  # told: the cache of judged directories is dropped
    assert relevant(ws / "node_modules/pkg/index.js")


async def test_stop_ends_the_watch(watched: tuple[Recording, Watcher], ws: Path) -> None:
    index, watcher = watched
    async with asyncio.timeout(5):
        await watcher.stop()
    assert watcher._thread is not None and not watcher._thread.is_alive()
    write(ws, "after.py", "written after the stop\n")
    await asyncio.sleep(0.5)
    assert ws / "after.py" not in index.told


async def test_a_watch_that_cannot_start_leaves_the_index_unanswering(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    index = WorkspaceIndex(tmp_path / "gone", tmp_path / "index.sqlite3")
    watcher = Watcher(index)
    with caplog.at_level(logging.WARNING, logger="tether.index.watching"):
        assert not await watcher.start()
    index.follow()  # whoever builds it next must not make it answer
    assert not index.following
    said = [r.getMessage() for r in caplog.records if r.name == "tether.index.watching"]
    assert len(said) == 1 and "cannot watch" in said[0] and "ripgrep" in said[0]
    await watcher.stop()


async def test_a_change_tether_made_is_caught_up_with_before_the_next_search(
    ws: Path, tmp_path: Path
) -> None:
    # No watcher here: the index follows, but nobody tells it of this write (as when the
    # watcher has not told it yet). After ``unsure`` the next search catches up first.
    index = WorkspaceIndex(ws, tmp_path / "index.sqlite3")
    await index.build()
    index.follow()
    write(ws, "made.py", "made_by_a_command_w = 1\n")
    assert "made.py" not in await found(index, ws, "made_by_a_command_w")
    index.unsure()
    assert "made.py" in await found(index, ws, "made_by_a_command_w")
    await index.close()


async def test_outside_git_the_catch_up_walks(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    write(ws, "a.py", "alpha = 1\n")
    index = WorkspaceIndex(ws.resolve(), tmp_path / "index.sqlite3")
    await index.build()
    index.follow()
    write(ws, "a.py", "rewritten_by_a_patch_w = 1\n")
    index.unsure()
    assert "a.py" in await found(index, ws.resolve(), "rewritten_by_a_patch_w")
    await index.close()


async def test_a_name_that_is_not_utf8_pauses_the_watch_and_it_starts_again(
    watched: tuple[Recording, Watcher], ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """watchfiles cannot name ``caf\\xe9.txt``: once it is read, its watch raises for
    good. The watch is set up again, and what changed while it was down is found."""
    index, _ = watched
    monkeypatch.setattr(watching, "RESTART_S", 0.3)
    odd = ws / os.fsdecode(b"caf\xe9.txt")
    odd.write_text("odd_marker_w\n")
    await eventually(lambda: index.paused)
    write(ws, "during.py", "during_marker_w = 1\n")  # perhaps while no watch is in place
    await eventually(lambda: not index.paused)
    assert "during.py" in await found(index, ws, "during_marker_w")
    odd.read_text()  # a read alone is enough to kill a watch; this one starts again too
    await eventually(lambda: index.paused)
    await eventually(lambda: not index.paused)
    write(ws, "after.py", "after_marker_w = 1\n")
    await search_until(index, ws, "after_marker_w", "after.py", held=True)


async def test_while_the_watch_is_down_the_index_answers_from_the_disk_as_it_is(
    watched: tuple[Recording, Watcher], ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mere read of a file whose name is not UTF-8 kills the watch, and ripgrep's walk
    reads it: the index once answered nothing until the watch was back (up to ten times
    its setup), so in such a workspace it answered next to nothing. While the watch is
    down, each search now catches up with the disk first: what changed is found."""
    index, _ = watched
    monkeypatch.setattr(watching, "RESTART_S", 60)  # down for the whole test
    odd = ws / os.fsdecode(b"caf\xe9.txt")
    odd.write_text("odd_marker_w\n")
    await eventually(lambda: index.paused)
    write(ws, "during.py", "during_marker_w = 1\n")
    assert "during.py" in await found(index, ws, "during_marker_w")
    write(ws, "a.py", "rewritten_while_down_w = 1\n")
    assert await found(index, ws, "rewritten_while_down_w") == {"a.py"}
    (ws / "during.py").unlink()
    assert "during.py" not in await found(index, ws, "during_marker_w")
    assert index.paused  # all of it answered while the watch was down
