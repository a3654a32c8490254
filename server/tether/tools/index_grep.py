"""``index-grep``: a regex search of the workspace, by ripgrep, with the editor's buffers first.

Open documents are searched on their live text (through ripgrep's stdin) and their
disk copies' matches are dropped, so a search sees exactly what fs-read would show.
Without ripgrep (or for a regex it refuses) the same walk the other tools use is
searched with RE2, in linear time, with the same output (``grep_search``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.tools import ripgrep
from tether.tools.base import ToolContext, quoted
from tether.tools.grep_search import Search, by_ripgrep, in_python
from tether.tools.narrowed import narrowed
from tether.tools.paths import checked, named, reads_inside, shown
from tether.tools.ripgrep_events import MAX_LINE_CHARS, Found

__all__ = ["MAX_LINE_CHARS", "IndexGrep", "IndexGrepParams"]
# A lone surrogate in a pattern, found by a regex: a Python loop over the characters took
# 37 ms for a million of them, on the event loop (with the regex: 3 ms; none if ASCII).
_SURROGATE = re.compile("[\ud800-\udfff]")
_RG_FLAGS = ("--json", *ripgrep.FLAGS)  # how it runs ripgrep on the disk (the benchmark's baseline)


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


class IndexGrep:
    name = "index-grep"
    reads = True  # its calls only read (one outside the workspace still asks)
    description = (
        "Search file contents with a regular expression (ripgrep's syntax: no look-around "
        "or backreferences). Returns one 'path:line: text' per matching line, paths "
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
        where = shown(ctx, params.path) + (f" ({quoted(params.glob)})" if params.glob else "")
        return f"grep /{quoted(params.pattern)}/ in {where}"

    async def run(self, params: IndexGrepParams, ctx: ToolContext) -> str:
        if not params.pattern.isascii() and _SURROGATE.search(params.pattern):
            raise ToolError("invalid regex: it holds a lone surrogate, which is no text")
        top = checked(ctx, params.path)
        search = Search(ctx, top, params.pattern, params.case_sensitive, params.glob)
        if top not in search.live:
            ripgrep.checked_root(ctx, top)  # exists, is a directory or a regular file
        # ripgrep is handed the pattern as an argument, which cannot hold NUL: RE2 can.
        rg = self._rg() if "\0" not in params.pattern else None
        found = None
        if rg and (files := await narrowed(search)) is not None:
            found = await by_ripgrep(rg, search, params.max_results, files)
        if rg and found is None:
            found = await by_ripgrep(rg, search, params.max_results)
        disk, live = found or await in_python(search, params.max_results)
        return _render(search, params, disk, live)


def _render(search: Search, params: IndexGrepParams, disk: Found, live: Found) -> str:
    limit = params.max_results
    hits = sorted(disk.hits + live.hits)[:limit]
    if not hits:
        where = named(search.ctx, search.top)
        where += f" (files matching {quoted(params.glob)})" if params.glob else ""
        return f"no matches for {quoted(params.pattern)!r} in {where}"
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
            + (", or raise max_results]" if len(lines) == limit else "]")
        )
    return "\n".join(lines)
