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
import threading
from collections.abc import Coroutine, Iterable
from pathlib import Path
from typing import Any, TypeVar

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools import ripgrep
from tether.tools.base import ToolContext, quoted
from tether.tools.candidates import from_disk, listed
from tether.tools.fs_find import Glob
from tether.tools.ignore import excluded, walk_files
from tether.tools.paths import named
from tether.tools.ripgrep_events import Found, collect
from tether.tools.text import disk_lines, split_lines

LIVE_AT_ONCE = 8  # ripgrep processes searching open documents at once
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
        return await listed(rg, [*args, "--regexp", search.pattern], search, limit, files)
    if search.glob and (names := search.glob.name_part()) and "\\" not in names:
        # --glob would override .gitignore; a file type narrows the walk without doing so.
        args = [*args, "--type-add", f"tether:{names}", "--type", "tether"]
    args = [*args, "--regexp", search.pattern]
    async with ripgrep.running(rg, args, search.ctx, search.top) as proc:
        return await from_disk(proc, limit, search)


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
    if len(runs) == 1:  # no task: its first step would wait for every task already due
        # (a reply's other calls' first steps), and its ripgrep would start that much later
        return [await runs[0]]
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
