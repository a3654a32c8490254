"""The entries fs-find and fs-list show: the index or ripgrep names the files, a short
walk adds the rest.

The workspace index, once it answers (built, and told of every change), names every
file ``files.walk`` keeps under a directory; else ``rg --files`` does, in a process of
its own. A walk by ``os.listdir`` then puts the tree together with set look-ups: a name
so named is a kept file, and a directory holding one is kept (entered unless it has
become a link since). Only what is left (symbolic links, directories with no kept file
inside, ignored entries) is matched against .gitignore in Python, as the walk matches
it. Without either, ``files.walk`` does it all; the entries are the same.

A directory's listing is kept while the directory is unchanged (``Listings``): listing
one took 17 µs of system calls on the bench's machine, where the ``lstat`` that judges
it anyway takes 3, and from one call to the next most directories are as they were.
"""

from __future__ import annotations

import asyncio
import math
import os
import stat
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from itertools import islice
from pathlib import Path
from typing import NamedTuple, cast

from tether.tools import ripgrep
from tether.tools.base import ToolContext
from tether.tools.ignore import Ignores, ignores_above, walk
from tether.tools.index_view import Kept


class Item(NamedTuple):
    """One entry of a listing (a tuple: a listing makes thousands, and a frozen
    dataclass takes three times as long to make)."""

    below: str  # the path under the directory walked, "/"-separated
    is_dir: bool  # a symbolic link to a directory too
    is_link: bool


# A listing starts on the event loop and goes on in a thread only once it has taken this
# long: the hop to a thread and back waits for the GIL behind a reply's other reads (the
# bench's reply of 8 reads: fs-find's and fs-list's listings of the standard library took
# 1.9 ms of CPU each, and 2.8 ms from their start in a thread to their end), and most
# listings end sooner; a long one (a large tree, a directory of many ignored files) does
# not hold the loop, which serves the editor meanwhile.
ON_LOOP_S = 0.003
_CHECK_EVERY = 64  # entries between looks at the clock

# An Item made by tuple's own constructor: a NamedTuple's is a Python function, and a
# listing of the standard library makes thousands (0.27 µs each against 0.44).
_item = cast(Callable[[tuple[str, bool, bool]], Item], partial(tuple.__new__, Item))


async def collect(
    rg: str | None,
    ctx: ToolContext,
    top: Path,
    limit: int,
    wanted: Callable[[Item], bool] = lambda item: True,
    max_depth: int | None = None,
) -> list[Item]:
    """The wanted entries under the directory ``top`` in tree order; one past ``limit`` at most."""
    kept = await ctx.index.kept() if ctx.inside(top) else None
    if kept is None and rg:
        files = await _rg_files(rg, ctx, top, max_depth)
        kept = None if files is None else Kept.named(files)
        prefix = ""
    else:
        prefix = "" if top == ctx.workspace else ctx.relative(top) + "/"
    ripgrep.checked_root(ctx, top)  # judged again right before it is walked
    items: Iterator[Item]
    if kept is None:
        items = _walk(ctx.workspace, top, max_depth)
    else:
        items = iter(_Tree(ctx.workspace, top, kept, prefix, max_depth))
    found: list[Item] = []
    stop = threading.Event()

    def scan(until: float) -> bool:
        """Entries into ``found`` until the listing is done (True) or ``until`` has passed."""
        for seen, item in enumerate(items, 1):
            if stop.is_set():
                return True
            if wanted(item):
                found.append(item)
                if len(found) > limit:
                    return True
            if not seen % _CHECK_EVERY and time.perf_counter() > until:
                return False
        return True

    if scan(time.perf_counter() + ON_LOOP_S):
        return found
    try:
        await asyncio.to_thread(scan, math.inf)
        return found
    finally:
        stop.set()  # a cancelled call leaves the thread running: tell it to quit


async def _rg_files(rg: str, ctx: ToolContext, top: Path, max_depth: int | None) -> set[str] | None:
    """The files under ``top`` that the walk keeps, by ripgrep; None if it could not say."""
    args = ["--files", "--null", *(("--max-depth", str(max_depth)) if max_depth else ())]
    async with ripgrep.running(rg, args, ctx, top) as proc:
        if proc is None:
            return None
        out, _ = await proc.communicate()
    if proc.returncode not in (0, 1):  # 2: something was unreadable; the walk says what
        return None
    where = ctx.relative(top)
    cut = len(where) + 1  # ripgrep prints "<where>/<below>"
    return {name[cut:] for name in os.fsdecode(out).split("\0") if name}


def _walk(root: Path, top: Path, max_depth: int | None) -> Iterator[Item]:
    for entry in walk(root, top, max_depth):
        yield Item(entry.path.relative_to(top).as_posix(), entry.is_dir, entry.is_link)


class _Tree:
    """``files.walk``'s entries, with the names of the files it keeps as the oracle (the
    index's, by their workspace-relative names: ``prefix`` is ``top``'s; or ripgrep's,
    relative to ``top``)."""

    def __init__(
        self, root: Path, top: Path, kept: Kept, prefix: str, max_depth: int | None
    ) -> None:
        self.root, self.top, self.max_depth = root, top, max_depth
        self.files, self.dirs, self.prefix = kept.files, kept.dirs, prefix
        self._ignores: dict[str, Ignores] = {}

    def __iter__(self) -> Iterator[Item]:
        try:
            status = os.lstat(self.top)
        except OSError:
            return iter(())
        return self._items(str(self.top), status, "", 1)

    def _items(
        self, directory: str, status: os.stat_result, prefix: str, depth: int
    ) -> Iterator[Item]:
        names = LISTINGS.names(directory, status)
        if names is None:
            return  # an unreadable directory is skipped, as the walk skips it
        for name in names:
            below = prefix + name
            if self.prefix + below in self.files:
                yield _item((below, False, False))
                continue
            if name == ".git":
                continue
            path = os.path.join(directory, name)
            try:
                here: os.stat_result | None = os.lstat(path)
            except OSError:
                here = None  # gone since it was listed
            mode = 0 if here is None else here.st_mode
            # A directory the names say holds kept files is entered only if it is one now:
            # one swapped for a link since the names were taken is shown as a link.
            if self.prefix + below in self.dirs and stat.S_ISDIR(mode):
                is_dir, is_link = True, False
            else:
                is_link = stat.S_ISLNK(mode)
                is_dir = os.path.isdir(path) if is_link else stat.S_ISDIR(mode)
                if self._rules(directory).ignored(Path(path), is_dir):
                    continue
            yield _item((below, is_dir, is_link))
            if (
                here
                and is_dir
                and not is_link
                and (self.max_depth is None or depth < self.max_depth)
            ):
                yield from self._items(path, here, below + "/", depth + 1)

    def _rules(self, directory: str) -> Ignores:
        """The ignore rules in force in ``directory``, loaded only for what the names left."""
        if (rules := self._ignores.get(directory)) is None:
            above = (
                ignores_above(self.root, self.top)
                if directory == str(self.top)
                else self._rules(os.path.dirname(directory))
            )
            rules = self._ignores[directory] = above.descend(Path(directory))
        return rules


class Listings:
    """Directory listings, each kept while its directory is as it was listed.

    A name added, removed or renamed in a directory moves its mtime and ctime (and its
    ctime moves when its permissions do), so a listing is given again only while the
    directory's inode, device, mtime and ctime are those it had. Within one tick of the
    clock that stamps them a change can leave them as they were, so a directory stamped
    less than ``SETTLED_NS`` before it was listed is listed again at every call (git's
    "racy" files, and a FAT disk's two-second stamps). At most ``MAX_NAMES`` names are
    kept; past them every listing is let go. POSIX requires a name made or removed to
    mark its directory's times (Linux and macOS keep to it, on FAT too); Windows leaves a
    FAT or exFAT directory's time as it was: there every listing is taken anew.

    A listing holds its names, and, once asked for (``regular_files``), which of them
    were regular files: a file swapped for a link or a directory was removed from the
    directory and another entry made, and that moved the directory's times. A directory of
    more than ``CROWDED`` entries is not listed for its files (``regular_files`` says None,
    and remembers it while the directory is as it was): a search's files are judged on
    the event loop, where listing 100,000 entries took 103 ms, and an ``lstat`` of each of
    the few hundred files a search names costs less.
    """

    SETTLED_NS = 2_000_000_000
    MAX_NAMES = 200_000
    CROWDED = 2_000  # entries (~2 ms to list)
    MAX_CROWDED = 1_000  # crowded directories remembered; past them all are let go
    TRUSTED = os.name != "nt"  # a directory's times move with its names

    def __init__(self) -> None:
        self._kept: dict[str, _Listing] = {}
        self._crowded: dict[str, tuple[int, int, int, int]] = {}  # their stamps when seen
        self._names = 0

    def names(self, directory: str, status: os.stat_result) -> tuple[str, ...] | None:
        """``directory``'s names, sorted, ``status`` being its ``lstat`` taken just now;
        None when it cannot be listed."""
        kept = self._kept.get(directory)
        if kept is not None and kept.stamp == _stamp(status):
            return kept.names
        started = time.time_ns()
        try:
            names = tuple(sorted(os.listdir(directory)))
        except OSError:
            return None
        self._keep(directory, _Listing(_stamp(status), names, None), status, started)
        return names

    def regular_files(self, directory: str, status: os.stat_result) -> frozenset[str] | None:
        """The names of ``directory``'s regular files (no links), ``status`` being its
        ``lstat`` taken just now; None when it cannot be listed, holds more than
        ``CROWDED`` entries, or was changed so lately that its listing could not be kept:
        then each file is to be judged by itself (a directory being written to is not
        listed at every call)."""
        stamp = _stamp(status)
        kept = self._kept.get(directory)
        if kept is not None and kept.files is not None and kept.stamp == stamp:
            return kept.files
        if self._crowded.get(directory) == stamp:
            return None
        started = time.time_ns()
        if not (self.TRUSTED and _settled(status, started, self.SETTLED_NS)):
            return None
        try:
            with os.scandir(directory) as entries:
                kinds = [
                    (entry.name, entry.is_file(follow_symlinks=False))
                    for entry in islice(entries, self.CROWDED + 1)
                ]
        except OSError:
            return None
        if len(kinds) > self.CROWDED:
            if len(self._crowded) >= self.MAX_CROWDED:
                self._crowded.clear()  # as ``_keep`` lets go: a dict's calls are atomic
            self._crowded[directory] = stamp
            return None
        names = tuple(sorted(name for name, _ in kinds))
        files = frozenset(name for name, regular in kinds if regular)
        self._keep(directory, _Listing(stamp, names, files), status, started)
        return files

    def _keep(self, directory: str, listing: _Listing, status: os.stat_result, at: int) -> None:
        if not (self.TRUSTED and _settled(status, at, self.SETTLED_NS)):
            return
        if (kept := self._kept.get(directory)) is not None:
            self._names -= len(kept.names)
        if self._names + len(listing.names) > self.MAX_NAMES:
            self._kept.clear()  # threads may list at once: a dict's calls are atomic
            self._names = 0
        self._kept[directory] = listing
        self._names += len(listing.names)


class _Listing(NamedTuple):
    stamp: tuple[int, int, int, int]
    names: tuple[str, ...]
    files: frozenset[str] | None  # the regular files among the names, once asked for


def _stamp(status: os.stat_result) -> tuple[int, int, int, int]:
    return (status.st_ino, status.st_dev, status.st_mtime_ns, status.st_ctime_ns)


def _settled(status: os.stat_result, listed_at: int, settled_ns: int) -> bool:
    return max(status.st_mtime_ns, status.st_ctime_ns) < listed_at - settled_ns


LISTINGS = Listings()  # the server's, shared by every listing (a scan's thread among them)
