"""``index-grep``: a regex search of the workspace, by ripgrep, with the editor's buffers first.

Open documents are searched in Python on their live text and their disk copies'
matches are dropped, so a search sees exactly what fs-read would show. Without
ripgrep (or for a regex only Python accepts, such as a look-around) the same
walk the other tools use is searched in Python, with the same output.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.tools import ripgrep
from tether.tools.base import ToolContext
from tether.tools.fs_find import Glob
from tether.tools.ignore import excluded, walk_files
from tether.tools.paths import reads_inside, resolve, shown
from tether.tools.text import disk_lines, split_lines

MAX_LINE_CHARS = 300
COUNT_PAST = 10_000  # matches counted beyond max_results before the search gives up counting
_RG_FLAGS = ("--json", *ripgrep.FLAGS)
# ripgrep's JSON events start with their type: most lines are read no further.
_MATCH, _BEGIN, _END = b'{"type":"match"', b'{"type":"begin"', b'{"type":"end"'


class IndexGrepParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(description="A regular expression, matched against each line.")
    path: str = Field(
        default=".", description="A file, or a directory to search under (default: everything)."
    )
    glob: str | None = Field(
        default=None,
        description="Only files matching this glob: '*.py' matches names, 'src/**/*.ts' paths.",
    )
    case_sensitive: bool = Field(default=True, description="False ignores case.")
    max_results: int = Field(
        default=100, ge=1, le=2000, description="How many matching lines to show at most."
    )


@dataclass
class _Found:
    hits: list[tuple[tuple[str, ...], int, str]] = field(default_factory=list)  # sorts by path
    total: int = 0
    counting_stopped: bool = False

    def add(self, shown: str, line: int, text: str, start: int, limit: int) -> bool:
        """Record one match; False once counting should stop."""
        if len(self.hits) < limit:
            self.hits.append((tuple(shown.split("/")), line, _clip(text, start)))
        return self.count(limit)

    def count(self, limit: int) -> bool:
        """Count one match; False once counting should stop."""
        self.total += 1
        self.counting_stopped = self.total >= limit + COUNT_PAST
        return not self.counting_stopped


class _Search:
    """One call's question: what to match, where, and which files to leave to the editor."""

    def __init__(self, ctx: ToolContext, params: IndexGrepParams, top: Path) -> None:
        try:
            flags = 0 if params.case_sensitive else re.IGNORECASE
            self.regex = re.compile(params.pattern, flags)
        except re.error as exc:
            raise ToolError(f"invalid regex {params.pattern!r}: {exc}") from None
        self.ctx, self.params, self.top, self.limit = ctx, params, top, params.max_results
        self.glob = Glob(params.glob) if params.glob else None
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
        return printed.removeprefix("./") if self.top == self.ctx.workspace else printed

    def in_scope(self, path: Path) -> bool:
        inside = path == self.top or path.is_relative_to(self.top)
        return inside and self.wanted(path) and not excluded(self.ctx.workspace, self.top, path)

    def on_disk(self, path: Path) -> bool:
        """Whether a file found on disk is searched there (open documents are searched live)."""
        return path not in self.live and self.wanted(path)

    def wanted(self, path: Path) -> bool:
        return self.glob is None or self.glob.finds(self.ctx, self.top, path)

    def lines(self, found: _Found, path: Path, lines: Iterable[str]) -> bool:
        name = self.ctx.relative(path)
        for number, line in enumerate(lines, start=1):
            if (match := self.regex.search(line)) and not found.add(
                name, number, line, match.start(), self.limit
            ):
                return False
        return True


class IndexGrep:
    name = "index-grep"
    description = (
        "Search file contents with a regular expression (ripgrep syntax; Python-style "
        "look-arounds also work). Returns one 'path:line: text' per matching line, paths "
        "relative to the workspace root, sorted by path then line; unsaved editor text is "
        "searched instead of the disk copy. Skips .gitignore'd files, .git and binary files. "
        "Narrow with `path` and `glob`; at most `max_results` lines (default 100), with a "
        f"note of how many more matched. Long lines are cut to {MAX_LINE_CHARS} characters "
        "around the match."
    )
    params = IndexGrepParams

    def __init__(self, rg: Callable[[], str | None] = ripgrep.find_rg) -> None:
        self._rg = rg

    def read_only(self, params: IndexGrepParams, ctx: ToolContext) -> bool:
        return reads_inside(ctx, params.path)

    def summary(self, params: IndexGrepParams, ctx: ToolContext) -> str:
        where = shown(ctx, params.path) + (f" ({params.glob})" if params.glob else "")
        return f"grep /{params.pattern}/ in {where}"

    async def run(self, params: IndexGrepParams, ctx: ToolContext) -> str:
        top = resolve(ctx, params.path)
        search = _Search(ctx, params, top)
        if top not in search.live and not top.exists():
            raise ToolError(f"no such file or directory: {ctx.relative(top)}")
        disk = _Found()  # an open file searched alone has nothing left on disk
        if top not in search.live:
            rg = self._rg()
            disk = (await _ripgrep(rg, search) if rg else None) or await _in_thread(search)
        live = _Found()
        for path in sorted(search.live):
            search.lines(live, path, split_lines(search.live[path]))
        return _render(search, disk, live)


async def _ripgrep(rg: str, search: _Search) -> _Found | None:
    """ripgrep's matches, or None when it rejects a regex that Python accepted."""
    params = search.params
    args = ["--json", "--case-sensitive" if params.case_sensitive else "--ignore-case"]
    if search.glob and (names := search.glob.name_part()):
        # --glob would override .gitignore; a file type narrows the walk without doing so.
        args += ["--type-add", f"tether:{names}", "--type", "tether"]
    args += ["--regexp", params.pattern]
    async with ripgrep.running(rg, args, search.ctx, search.top) as proc:
        if proc is None:
            return None  # ripgrep went away: search in Python
        assert proc.stdout is not None and proc.stderr is not None
        errors = asyncio.ensure_future(proc.stderr.read())
        try:
            found, finished = await _read(proc.stdout, search)
            if not found.counting_stopped:
                await proc.wait()
        except ValueError:  # a line past the stream limit, or output that is not JSON
            raise ToolError("ripgrep printed a line too long to read; narrow the search") from None
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
            stderr = (await errors).decode(errors="replace").strip()
    if "regex parse error" in stderr:
        return None
    if proc.returncode == 2 and not finished:  # unreadable files alone do not fail a search
        raise ToolError(f"ripgrep failed: {stderr}")
    return found


async def _read(stdout: asyncio.StreamReader, search: _Search) -> tuple[_Found, bool]:
    """The matches in ripgrep's JSON events; whether it got as far as its summary."""
    found, limit, finished = _Found(), search.limit, False
    shown: str | None = None  # the file whose matches come next, or None to skip them
    async for batch in ripgrep.lines(stdout):
        for raw in batch:
            if raw.startswith(_MATCH):
                if shown is None:
                    continue
                if len(found.hits) >= limit:  # past max_results only the count matters
                    if not found.count(limit):
                        return found, finished
                    continue
                data = json.loads(raw)["data"]
                line = _raw(data["lines"])
                at = data["submatches"][0]["start"] if data["submatches"] else 0
                text = line.decode(errors="replace").removesuffix("\n").removesuffix("\r")
                start = len(line[:at].decode(errors="replace"))  # ripgrep counts bytes
                if not found.add(shown, data["line_number"], text, start, limit):
                    return found, finished
            elif raw.startswith(_BEGIN):
                shown = search.disk_name(os.fsdecode(_raw(json.loads(raw)["data"]["path"])))
            elif raw and not raw.startswith(_END):
                finished |= json.loads(raw)["type"] == "summary"
    return found, finished


def _raw(value: dict[str, Any]) -> bytes:
    """ripgrep's JSON carries text that is not UTF-8 as base64 "bytes"."""
    return base64.b64decode(value["bytes"]) if "bytes" in value else str(value["text"]).encode()


async def _in_thread(search: _Search) -> _Found:
    stop = threading.Event()

    def scan() -> _Found:
        found = _Found()
        for path in walk_files(search.ctx.workspace, search.top):
            if stop.is_set() or (
                search.on_disk(path) and not search.lines(found, path, disk_lines(path))
            ):
                break
        return found

    try:
        return await asyncio.to_thread(scan)
    finally:
        stop.set()  # a cancelled call leaves the thread running: tell it to quit


def _clip(text: str, start: int) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    begin = max(0, min(start - MAX_LINE_CHARS // 3, len(text) - MAX_LINE_CHARS))
    return ("…" if begin else "") + text[begin : begin + MAX_LINE_CHARS] + "…"


def _render(search: _Search, disk: _Found, live: _Found) -> str:
    hits = sorted(disk.hits + live.hits)[: search.limit]
    if not hits:
        where = search.ctx.relative(search.top)
        where += f" (files matching {search.params.glob})" if search.glob else ""
        return f"no matches for {search.params.pattern!r} in {where}"
    budget = search.ctx.settings.max_read_bytes
    lines: list[str] = []
    for key, number, text in hits:
        line = f"{'/'.join(key)}:{number}: {text}"
        budget -= len(line) + 1
        if budget < 0:
            break
        lines.append(line)
    more = disk.total + live.total - len(lines)
    if more:
        count = f"{more}+" if disk.counting_stopped else str(more)
        lines.append(
            f"[{count} more matching lines not shown; narrow with path or glob"
            + (", or raise max_results]" if len(lines) == search.limit else "]")
        )
    return "\n".join(lines)
