"""How ``index-grep`` searches the files the workspace index narrowed it to.

A slice's worth is read at once, as ripgrep's JSON events. More are counted first, a
slice of files at a time, in order, a few slices at once (a slice is needed only while
those before it have not counted enough), each judged right before its ripgrep starts;
then only the first files holding matches are read as JSON, as soon as the count has
named them: the events of matches that are only counted cost far more to read than a
number a file.

A slice is judged on the event loop, not in a thread, where directories' listings are
kept: it is a few hundred names, judged by their directories' listings (727 names:
1.4 ms), and the hop to a thread and back waited for the GIL behind a reply's other
reads, holding back the ripgrep it was for. Where none is kept (Windows), each name takes
an ``lstat`` of its own, and a slice goes to a thread as before.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from tether.tools import ripgrep, ripgrep_events
from tether.tools.listing import LISTINGS
from tether.tools.narrowed import judged
from tether.tools.ripgrep_events import Found, collect

if TYPE_CHECKING:
    from tether.tools.grep_search import Search

SLICE_FILES = 400
SLICE_BYTES = 20_000 if os.name == "nt" else 400_000  # of names, within a command line
SLICES_AT_ONCE = max(1, min(4, os.cpu_count() or 1))


async def listed(
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
            return await from_disk(proc, limit, search)
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
    names = await _judged(search, names)
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
        real = await _judged(search, slice_)
        if not real:
            continue
        async with ripgrep.listed(rg, args, search.ctx.workspace, real) as proc:
            part = await from_disk(proc, limit, search)
        if part is None:
            return None
        found.hits += part.hits[: limit - len(found.hits)]
        found.total = min(found.total + part.total, limit + ripgrep_events.COUNT_PAST)
        found.counting_stopped = found.total >= limit + ripgrep_events.COUNT_PAST
        if found.counting_stopped:
            break
    return found


async def from_disk(proc: ripgrep.Process | None, limit: int, search: Search) -> Found | None:
    """None when ripgrep could not start (the search is made in Python) or refused the pattern."""
    every = not (search.live or search.glob)  # disk_name names every file
    return None if proc is None else await collect(proc, limit, search.disk_name, every)


async def _judged(search: Search, names: Sequence[bytes]) -> list[bytes]:
    """``names`` judged now (``narrowed.judged``): on the loop where a directory's listing
    judges its files, else (an ``lstat`` a file) in a thread."""
    if LISTINGS.TRUSTED:
        return judged(search.ctx.workspace, names)
    return await asyncio.to_thread(judged, search.ctx.workspace, names)
