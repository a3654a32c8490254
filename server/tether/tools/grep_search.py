"""How ``index-grep`` searches: by ripgrep, disk and open documents alike; else in RE2.

ripgrep searches the disk, and each open document's live text through its stdin (one
process per document, a few at a time), so buffers and disk share its exact semantics
and no regex ever runs in this process. Without ripgrep, or for a pattern it refuses,
the same files and buffers are searched here with RE2 (``google-re2``), whose time is
linear in the text: no pattern can hold the server. A cancelled call stops at once:
every ripgrep is killed, the thread is told to quit.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import deque
from collections.abc import Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools import ripgrep, ripgrep_events
from tether.tools.base import ToolContext, quoted
from tether.tools.fs_find import Glob
from tether.tools.ignore import excluded, walk_files
from tether.tools.narrowed import judged
from tether.tools.paths import named
from tether.tools.ripgrep_events import Found, collect
from tether.tools.text import disk_lines, split_lines

LIVE_AT_ONCE = 8  # ripgrep processes searching open documents at once
# The index's candidates are counted a slice at a time, in order, this many at once (a
# slice is needed only while those before it have not counted enough), each slice judged
# right before its ripgrep starts; then the first files holding matches are read whole.
SLICE_FILES = 400
SLICE_BYTES = 20_000 if os.name == "nt" else 400_000  # of names, within a command line
SLICES_AT_ONCE = max(1, min(4, os.cpu_count() or 1))
T = TypeVar("T")


class Search:
    """One call's question: what to match, where, and which files to leave to the editor."""

    def __init__(
        self, ctx: ToolContext, top: Path, pattern: str, case_sensitive: bool, glob: str | None
    ) -> None:
        self.ctx, self.top, self.pattern, self.case_sensitive = ctx, top, pattern, case_sensitive
        self.glob = Glob(glob) if glob else None
        self.live: dict[Path, str] = {}
        for path in ctx.documents.open_paths():
            text = ctx.documents.live_text(path)
            if text is not None and self.in_scope(path):
                self.live[path] = text

    def disk_name(self, printed: str) -> str | None:
        """How a file ripgrep printed is shown; None when its matches on disk are not wanted."""
        if (self.live or self.glob) and not self.on_disk(self.ctx.workspace / printed):
            return None
        # ripgrep prints "<the path it was given>/<below>": "./src/a.py" for ".".
        shown = printed.removeprefix("./") if self.top == self.ctx.workspace else printed
        return escape_surrogates(shown)

    def in_scope(self, path: Path) -> bool:
        inside = path == self.top or path.is_relative_to(self.top)
        return inside and self.wanted(path) and not excluded(self.ctx.workspace, self.top, path)

    @property
    def case_flag(self) -> str:
        return "--case-sensitive" if self.case_sensitive else "--ignore-case"

    def on_disk(self, path: Path) -> bool:
        """Whether a file found on disk is searched there (open documents are searched live)."""
        return path not in self.live and self.wanted(path)

    def wanted(self, path: Path) -> bool:
        return self.glob is None or self.glob.finds(self.ctx, self.top, path)


async def by_ripgrep(
    rg: str, search: Search, limit: int, files: list[bytes] | None = None
) -> tuple[Found, Found] | None:
    """The matches on disk and in open documents; None when ripgrep refused the pattern.
    ``files``: only these are searched on disk (the index narrowed the search)."""
    args = ["--json", search.case_flag]
    slots = asyncio.Semaphore(LIVE_AT_ONCE)
    live = [_live(rg, args, search, path, limit, slots) for path in sorted(search.live)]
    disk = [] if search.top in search.live else [_disk(rg, args, search, limit, files)]
    runs = await _together(*disk, *live)
    found = [run for run in runs if run is not None]
    if len(found) < len(runs):
        return None
    return (found[0] if disk else Found()), Found.merged(found[len(disk) :])


async def _disk(
    rg: str, args: list[str], search: Search, limit: int, files: list[bytes] | None
) -> Found | None:
    if files is None and not search.top.is_dir() and not search.on_disk(search.top):
        files = []  # one file the glob leaves out: ripgrep would print each of its matches
        # (all 600,000 lines of a log for "$") only for them to be dropped here, uncounted
    if files is not None:
        return await _listed(rg, [*args, "--regexp", search.pattern], search, limit, files)
    if search.glob and (names := search.glob.name_part()) and "\\" not in names:
        # --glob would override .gitignore; a file type narrows the walk without doing so.
        args = [*args, "--type-add", f"tether:{names}", "--type", "tether"]
    args = [*args, "--regexp", search.pattern]
    async with ripgrep.running(rg, args, search.ctx, search.top) as proc:
        return await _from_disk(proc, limit, search)


async def _listed(
    rg: str, args: list[str], search: Search, limit: int, files: list[bytes]
) -> Found | None:
    """The candidates' matches: a slice's worth read at once; more in two passes: how
    many lines match in each file (a number a file, slice by slice, until the count is
    enough), and the lines to show, read as JSON from only the first files holding them
    (tens of files where the candidates are thousands: the events of the matches only
    counted cost far more to read than the count), as soon as the count has named them."""
    if not files:  # ripgrep handed no path would search its working directory: an empty
        # text instead, so that a pattern it refuses is refused as it would be
        async with ripgrep.searching_text(rg, args, b"", search.ctx.workspace) as proc:
            return await _from_disk(proc, limit, search)
    if len(files) <= SLICE_FILES:  # few: read at once, their matches counted as they come
        return await _shown(rg, args, search, limit, files)
    reading: asyncio.Task[Found | None] | None = None

    def read(shown: list[bytes]) -> None:
        nonlocal reading
        reading = asyncio.create_task(_shown(rg, args, search, limit, shown))

    try:
        total = await _counted(rg, search, limit, files, read)
        found = None if total is None else Found() if reading is None else await reading
    finally:
        if reading is not None and not reading.done():
            reading.cancel()  # its ripgrep is killed and reaped
            await asyncio.gather(reading, return_exceptions=True)
    if found is None or total is None:
        return None
    stop = limit + ripgrep_events.COUNT_PAST
    found.total = max(min(total, stop), len(found.hits))  # a file may change between passes
    found.counting_stopped = total >= stop
    return found


async def _counted(
    rg: str, search: Search, limit: int, files: list[bytes], read: Callable[[list[bytes]], None]
) -> int | None:
    """How many lines match in the files, counted slice by slice, a few at once, until
    ``COUNT_PAST`` past ``limit`` (the slices after are not needed); ``read`` is handed
    the files holding the first ``limit`` of them once they are known. None when
    ripgrep refused the pattern."""
    slices: deque[Sequence[bytes]] = deque(_sliced(files))
    running: deque[asyncio.Task[list[tuple[bytes, int]] | None]] = deque()
    shown: list[bytes] = []
    total, enough = 0, limit + ripgrep_events.COUNT_PAST
    try:
        while (slices or running) and total < enough:
            while slices and len(running) < SLICES_AT_ONCE:
                running.append(asyncio.create_task(_count(rg, search, slices.popleft())))
            part = await running.popleft()
            if part is None:
                return None
            for name, lines in part:
                if total < limit:  # some of its lines are among the first ``limit``
                    shown.append(name)
                    if total + lines >= limit:
                        read(shown)
                total += lines
        if shown and total < limit:
            read(shown)
        return total
    finally:
        for task in running:
            task.cancel()  # its ripgrep is killed and reaped
        await asyncio.gather(*running, return_exceptions=True)


def _sliced(files: list[bytes]) -> Iterable[Sequence[bytes]]:
    start = size = 0
    for at, name in enumerate(files):
        if at > start and (at - start == SLICE_FILES or size + len(name) > SLICE_BYTES):
            yield files[start:at]
            start, size = at, 0
        size += len(name) + 1
    yield files[start:]


async def _count(rg: str, search: Search, names: Sequence[bytes]) -> list[tuple[bytes, int]] | None:
    """How many lines match in each of these files that has any, judged now; None when
    ripgrep refused the pattern."""
    names = await asyncio.to_thread(judged, search.ctx.workspace, names)
    if not names:
        return []
    # A count a line, for every file in the order given: printing the names as well
    # took ripgrep a third longer. A file it could not read has no line; then the names.
    out = await _counts(rg, search, names, ("--no-filename", "--include-zero"))
    if out is None:
        return None
    counts = out.split(b"\n")[:-1]
    if len(counts) == len(names):
        return [(name, int(n)) for name, n in zip(names, counts, strict=True) if n != b"0"]
    out = await _counts(rg, search, names, ("--with-filename", "--null"))
    if out is None:
        return None
    # "<name>\0<count>\n" a file: a name may hold a newline, a count never does.
    asked = set(names)
    pieces = out.split(b"\0")
    counted: list[tuple[bytes, int]] = []
    name = pieces[0]
    for rest in pieces[1:]:
        lines, _, following = rest.partition(b"\n")
        if name in asked and lines.isdigit():  # unreadable files alone do not fail a search
            counted.append((name, int(lines)))
        name = following
    return counted


async def _counts(
    rg: str, search: Search, names: Sequence[bytes], how: tuple[str, ...]
) -> bytes | None:
    """ripgrep's ``--count`` of these files, printed ``how``; None when it refused the
    pattern."""
    args = ["--count", *how, search.case_flag, "--regexp", search.pattern]
    async with ripgrep.listed(rg, args, search.ctx.workspace, names) as proc:
        if proc is None:
            return None
        out, err = await proc.communicate()
    if proc.returncode == 2 and b"regex parse error" in err:
        return None
    return out


async def _shown(
    rg: str, args: list[str], search: Search, limit: int, names: list[bytes]
) -> Found | None:
    """The matches in these files, each slice judged right before ripgrep reads it,
    from its JSON events (counted as one search's, up to ``COUNT_PAST`` past ``limit``);
    None when ripgrep refused the pattern."""
    found = Found()
    for slice_ in _sliced(names):  # a slice within a command line
        real = await asyncio.to_thread(judged, search.ctx.workspace, slice_)
        if not real:
            continue
        async with ripgrep.listed(rg, args, search.ctx.workspace, real) as proc:
            part = await _from_disk(proc, limit, search)
        if part is None:
            return None
        found.hits += part.hits[: limit - len(found.hits)]
        found.total = min(found.total + part.total, limit + ripgrep_events.COUNT_PAST)
        found.counting_stopped = found.total >= limit + ripgrep_events.COUNT_PAST
        if found.counting_stopped:
            break
    return found


async def _from_disk(proc: ripgrep.Process | None, limit: int, search: Search) -> Found | None:
    """None when ripgrep could not start (the search is made in Python) or refused the pattern."""
    every = not (search.live or search.glob)  # disk_name names every file
    return None if proc is None else await collect(proc, limit, search.disk_name, every)


async def _live(
    rg: str, args: list[str], search: Search, path: Path, limit: int, slots: asyncio.Semaphore
) -> Found | None:
    name = named(search.ctx, path)
    data = search.live[path].encode("utf-8", errors="surrogatepass")
    args = [*args, "--regexp", search.pattern]
    async with slots, ripgrep.searching_text(rg, args, data, search.ctx.workspace) as proc:
        if proc is None:
            return None
        return await collect(proc, limit, lambda _: name, every=True)


async def _together(*runs: Coroutine[Any, Any, T]) -> list[T]:
    """Run ``runs`` at once; the first ToolError cancels the others (killing their rg)."""
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run) for run in runs]
    except* ToolError as failed:
        raise failed.exceptions[0] from None
    return [task.result() for task in tasks]


def compiled(pattern: str, case_sensitive: bool) -> Any:
    """``pattern`` as RE2 compiles it (ripgrep's syntax, less a few Unicode classes)."""
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0] if exc.args else exc
        why = quoted(why.decode(errors="replace") if isinstance(why, bytes) else str(why))
        raise ToolError(
            f"invalid regex {quoted(pattern)!r}: {why}"
            " (ripgrep's syntax: no look-around or backreferences)"
        ) from None


async def in_python(search: Search, limit: int) -> tuple[Found, Found]:
    """The matches on disk and in open documents, found here with RE2, in a thread."""
    regex = compiled(search.pattern, search.case_sensitive)
    stop = threading.Event()
    ctx = search.ctx

    def lines(found: Found, path: Path, texts: Iterable[str]) -> bool:
        name = named(ctx, path)
        for number, line in enumerate(texts, start=1):
            if stop.is_set():
                return False
            if (match := regex.search(line)) and not found.add(
                name, number, line, match.start(), limit
            ):
                return False
        return True

    def scan() -> tuple[Found, Found]:
        disk, live = Found(), Found()
        if search.top not in search.live:
            for path in walk_files(ctx.workspace, search.top):
                if search.on_disk(path) and not lines(disk, path, disk_lines(ctx, path)):
                    break
        for path in sorted(search.live):
            text = search.live[path].encode(errors="surrogatepass").decode(errors="replace")
            if not lines(live, path, split_lines(text)):
                break
        return disk, live

    try:
        return await asyncio.to_thread(scan)
    finally:
        stop.set()  # a cancelled call leaves the thread running: tell it to quit
