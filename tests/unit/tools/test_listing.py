"""A directory's listing is kept while the directory is as it was listed, and only then."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.unit.tools import call, context, write
from tether.tools import listing
from tether.tools.fs_list import FsList
from tether.tools.listing import Listings

LIST = FsList()


@pytest.fixture
def listed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every directory ``os.listdir`` is asked for, in order."""
    asked: list[str] = []
    real = os.listdir

    def counting(path: str) -> list[str]:
        asked.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "listdir", counting)
    return asked


def names_of(listings: Listings, directory: Path) -> tuple[str, ...] | None:
    return listings.names(str(directory), os.lstat(directory))


@pytest.mark.usefixtures("later")
def test_a_settled_directory_is_listed_once(tmp_path: Path, listed: list[str]) -> None:
    write(tmp_path, "b.py", "")
    write(tmp_path, "a.py", "")
    listings = Listings()

    assert names_of(listings, tmp_path) == names_of(listings, tmp_path) == ("a.py", "b.py")
    assert listed == [str(tmp_path)]


@pytest.mark.usefixtures("later")
@pytest.mark.parametrize(
    "change",
    [
        lambda d: write(d, "new.py", ""),
        lambda d: (d / "a.py").unlink(),
        lambda d: (d / "a.py").rename(d / "c.py"),
        lambda d: (d / "sub").mkdir(),
        lambda d: (d / "link").symlink_to("a.py"),
    ],
    ids=["added", "removed", "renamed", "directory made", "link made"],
)
def test_a_name_changed_in_a_kept_directory_is_listed_anew(
    tmp_path: Path, change: Callable[[Path], object]
) -> None:
    write(tmp_path, "a.py", "")
    listings = Listings()
    names_of(listings, tmp_path)

    change(tmp_path)

    assert names_of(listings, tmp_path) == tuple(sorted(os.listdir(tmp_path)))


@pytest.mark.usefixtures("later")
def test_a_directory_swapped_for_another_stamped_alike_is_listed_anew(tmp_path: Path) -> None:
    """Another directory moved to the same path, even with the same mtime, is another
    inode (and its ctime is its own)."""
    here, other = tmp_path / "here", tmp_path / "other"
    write(here, "a.py", "")
    write(other, "secret.py", "")
    listings = Listings()
    assert names_of(listings, here) == ("a.py",)
    stamp = os.lstat(here)

    shutil.rmtree(here)
    other.rename(here)
    os.utime(here, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))

    assert names_of(listings, here) == ("secret.py",)


def test_a_directory_stamped_just_now_is_listed_every_time(
    tmp_path: Path, listed: list[str]
) -> None:
    """Within one tick of the clock that stamps it, a change may leave its stamp as it
    was: a listing taken then is not kept."""
    write(tmp_path, "a.py", "")
    listings = Listings()

    names_of(listings, tmp_path)
    names_of(listings, tmp_path)

    assert listed == [str(tmp_path)] * 2


@pytest.mark.usefixtures("later")
def test_where_times_do_not_move_with_names_every_listing_is_taken_anew(
    tmp_path: Path, listed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows: a FAT or exFAT directory's time stays as it was when a name is added."""
    monkeypatch.setattr(Listings, "TRUSTED", False)
    write(tmp_path, "a.py", "")
    listings = Listings()

    names_of(listings, tmp_path)
    names_of(listings, tmp_path)

    assert listed == [str(tmp_path)] * 2


def test_an_unreadable_directory_has_no_listing(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    status = os.lstat(gone)
    gone.rmdir()

    assert Listings().names(str(gone), status) is None


@pytest.mark.usefixtures("later")
def test_past_the_names_kept_every_listing_is_let_go(
    tmp_path: Path, listed: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Listings, "MAX_NAMES", 3)
    first, second = tmp_path / "first", tmp_path / "second"
    for directory in (first, second):
        write(directory, "a.py", "")
        write(directory, "b.py", "")
    listings = Listings()

    names_of(listings, first)
    names_of(listings, second)  # 4 names: the first's are let go to keep the second's
    names_of(listings, second)
    names_of(listings, first)

    assert listed == [str(first), str(second), str(first)]


@pytest.mark.usefixtures("later")
def test_a_crowded_directory_is_not_listed_for_its_files_while_it_is_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its files are judged each by itself: a search's are judged on the event loop, and
    listing 100,000 entries took 103 ms there."""
    monkeypatch.setattr(Listings, "CROWDED", 3)
    scanned: list[str] = []
    real = os.scandir

    def counting(path: str) -> Any:
        scanned.append(str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", counting)
    for n in range(4):
        write(tmp_path, f"m{n}.py", "")
    listings = Listings()

    status = os.lstat(tmp_path)
    assert listings.regular_files(str(tmp_path), status) is None
    assert listings.regular_files(str(tmp_path), status) is None
    assert scanned == [str(tmp_path)]  # remembered as crowded

    (tmp_path / "m0.py").unlink()
    files = listings.regular_files(str(tmp_path), os.lstat(tmp_path))
    assert files == frozenset({"m1.py", "m2.py", "m3.py"}) and len(scanned) == 2


@pytest.mark.usefixtures("later")
async def test_fs_list_shows_a_file_added_to_a_directory_it_listed(tmp_path: Path) -> None:
    write(tmp_path, "src/a.py", "")
    ctx = context(tmp_path)
    assert await call(LIST, ctx, depth=2) == "src/\nsrc/a.py"

    write(tmp_path, "src/b.py", "")

    assert await call(LIST, ctx, depth=2) == "src/\nsrc/a.py\nsrc/b.py"


@pytest.mark.usefixtures("later")
async def test_fs_list_lists_a_settled_workspace_once(tmp_path: Path, listed: list[str]) -> None:
    write(tmp_path, "src/a.py", "")
    ctx = context(tmp_path)
    first = await call(LIST, ctx, depth=2)
    asked = len(listed)

    assert await call(LIST, ctx, depth=2) == first
    assert len(listed) == asked  # nothing listed again
    assert listing.LISTINGS.names(str(tmp_path), os.lstat(tmp_path)) == ("src",)


async def test_a_short_listing_is_made_on_the_loop(tmp_path: Path, threaded: list[str]) -> None:
    """No hop to a thread, which waits for the GIL behind a reply's other reads."""
    write(tmp_path, "src/a.py", "")
    assert await call(LIST, context(tmp_path), depth=2) == "src/\nsrc/a.py"
    assert "scan" not in threaded


async def test_a_long_listing_goes_on_in_a_thread_with_the_same_entries(
    tmp_path: Path, threaded: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(150):
        write(tmp_path, f"d{n % 3}/f{n:03}.py", "")
    ctx = context(tmp_path)
    on_the_loop = await call(LIST, ctx, depth=2)
    assert "scan" not in threaded and len(on_the_loop.splitlines()) == 153

    monkeypatch.setattr(listing, "ON_LOOP_S", 0.0)  # its time on the loop is up at once
    assert await call(LIST, ctx, depth=2) == on_the_loop
    assert threaded.count("scan") == 1
