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
import base64
import json
import os
import threading
from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools import ripgrep
from tether.tools.base import ToolContext, quoted
from tether.tools.fs_find import Glob
from tether.tools.ignore import excluded, walk_files
from tether.tools.paths import named
from tether.tools.text import disk_lines, split_lines

MAX_LINE_CHARS = 300
COUNT_PAST = 10_000  # matches counted beyond max_results before the search gives up counting
LIVE_AT_ONCE = 8  # ripgrep processes searching open documents at once
# ripgrep's JSON events start with their type: most lines are read no further.
_MATCH, _BEGIN, _END = b'{"type":"match"', b'{"type":"begin"', b'{"type":"end"'
T = TypeVar("T")


@dataclass
class Found:
    hits: list[tuple[tuple[str, ...], int, str]] = field(default_factory=list)  # sorts by path
    total: int = 0
    counting_stopped: bool = False

    def add(self, shown: str, line: int, text: str, start: int, limit: int) -> bool:
        """Record one match (``start``: where it begins in ``text``); False once counting
        should stop."""
        if len(self.hits) < limit:
            self.hits.append((tuple(shown.split("/")), line, _clip(text, start)))
        return self.count(limit)

    def count(self, limit: int) -> bool:
        """Count one match; False once counting should stop."""
        self.total += 1
        self.counting_stopped = self.total >= limit + COUNT_PAST
        return not self.counting_stopped

    @classmethod
    def merged(cls, parts: Iterable[Found]) -> Found:
        whole = cls()
        for part in parts:
            whole.hits += part.hits
            whole.total += part.total
            whole.counting_stopped |= part.counting_stopped
        return whole


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
    args = ["--json", "--case-sensitive" if search.case_sensitive else "--ignore-case"]
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
    if not files:  # ripgrep handed no path would search its working directory: an empty
        # text instead, so that a pattern it refuses is refused as it would be
        async with ripgrep.searching_text(rg, args, b"", search.ctx.workspace) as proc:
            return await _from_disk(proc, limit, search)
    async with ripgrep.listed(rg, args, search.ctx.workspace, files) as proc:
        return await _from_disk(proc, limit, search)


async def _from_disk(proc: ripgrep.Process | None, limit: int, search: Search) -> Found | None:
    """None when ripgrep could not start (the search is made in Python) or refused the pattern."""
    every = not (search.live or search.glob)  # disk_name names every file
    return None if proc is None else await _collect(proc, limit, search.disk_name, every)


async def _live(
    rg: str, args: list[str], search: Search, path: Path, limit: int, slots: asyncio.Semaphore
) -> Found | None:
    name = named(search.ctx, path)
    data = search.live[path].encode("utf-8", errors="surrogatepass")
    args = [*args, "--regexp", search.pattern]
    async with slots, ripgrep.searching_text(rg, args, data, search.ctx.workspace) as proc:
        if proc is None:
            return None
        return await _collect(proc, limit, lambda _: name, every=True)


async def _collect(
    proc: ripgrep.Process, limit: int, name_of: Callable[[str], str | None], every: bool
) -> Found | None:
    """The matches ripgrep prints; None when it refused the pattern. ``every``: ``name_of``
    names every file (never None)."""
    assert proc.stdout is not None and proc.stderr is not None
    errors = asyncio.ensure_future(proc.stderr.read())
    try:
        try:
            found, finished = await _read(proc.stdout, limit, name_of, every)
        except ValueError:  # a line past the stream limit, or output that is not JSON
            raise ToolError("ripgrep printed a line too long to read; narrow the search") from None
        if not found.counting_stopped:
            await proc.wait()  # its output ended: so does it
        await ripgrep.stop(proc)  # past the count it is no longer needed
        stderr = (await errors).decode(errors="replace").strip()
    finally:
        errors.cancel()
    if "regex parse error" in stderr:
        return None
    if proc.returncode == 2 and not finished:  # unreadable files alone do not fail a search
        raise ToolError(f"ripgrep failed: {stderr}")
    return found


async def _read(
    stdout: asyncio.StreamReader, limit: int, name_of: Callable[[str], str | None], every: bool
) -> tuple[Found, bool]:
    """The matches in ripgrep's JSON events; whether it got as far as its summary."""
    found, finished = Found(), False
    shown: str | None = None  # the file whose matches come next, or None to skip them
    begin: bytes | None = None  # its "begin" event, read when its name is needed (past
    # max_results, when every file counts, never: a common pattern begins most files)
    async for batch in ripgrep.lines(stdout):
        for raw in batch:
            if raw.startswith(_MATCH):
                full = len(found.hits) >= limit
                if begin is not None and not (full and every):
                    shown = name_of(os.fsdecode(_raw(json.loads(begin)["data"]["path"])))
                    begin = None
                if full:  # past max_results only the count matters
                    wanted = begin is not None or shown is not None
                    if wanted and not found.count(limit):
                        return found, finished
                    continue
                if shown is None:
                    continue  # a file whose matches are not wanted
                data = json.loads(raw)["data"]
                line = _raw(data["lines"])
                at = data["submatches"][0]["start"] if data["submatches"] else 0
                text = line.decode(errors="replace").removesuffix("\n").removesuffix("\r")
                start = len(line[:at].decode(errors="replace"))  # ripgrep counts bytes
                if not found.add(shown, data["line_number"], text, start, limit):
                    return found, finished
            elif raw.startswith(_BEGIN):
                begin, shown = raw, None
            elif raw and not raw.startswith(_END):
                finished |= json.loads(raw)["type"] == "summary"
    return found, finished


def _raw(value: dict[str, Any]) -> bytes:
    """ripgrep's JSON carries text that is not UTF-8 as base64 "bytes"."""
    return base64.b64decode(value["bytes"]) if "bytes" in value else str(value["text"]).encode()


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


def _clip(text: str, start: int) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    begin = max(0, min(start - MAX_LINE_CHARS // 3, len(text) - MAX_LINE_CHARS))
    return ("…" if begin else "") + text[begin : begin + MAX_LINE_CHARS] + "…"
