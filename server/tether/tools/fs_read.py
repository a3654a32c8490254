"""``fs-read``: a text file's lines, numbered, from the editor's buffer when it is open."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.tools.base import ToolContext
from tether.tools.paths import reads_inside, resolve, shown
from tether.tools.text import (
    MAX_FILE_BYTES,
    SNIFF_BYTES,
    check_file,
    decode,
    read_disk,
    refuse_binary,
    split_lines,
)

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000


class FsReadParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The file, relative to the workspace root (or absolute).")
    offset: int = Field(default=1, ge=1, description="First line to show, 1-based.")
    limit: int = Field(default=DEFAULT_LIMIT, ge=1, description="How many lines to show at most.")


@dataclass(frozen=True)
class _Window:
    lines: list[str]
    total: int | None  # None: a file too large to count, read only up to the window
    more: bool


class FsRead:
    name = "fs-read"
    description = (
        "Read a text file of the workspace. Returns its lines numbered from 1, one per line as "
        "'<number><TAB><text>'. Shows the editor's unsaved text for open files. Reads up to "
        f"{DEFAULT_LIMIT} lines from `offset` (1-based) unless `limit` says otherwise; long "
        "output is cut and a closing note says which offset to continue from. Lines over "
        f"{MAX_LINE_CHARS} characters are shortened. Binary files are refused."
    )
    params = FsReadParams

    def read_only(self, params: FsReadParams, ctx: ToolContext) -> bool:
        return reads_inside(ctx, params.path)

    def summary(self, params: FsReadParams, ctx: ToolContext) -> str:
        what = f"read {shown(ctx, params.path)}"
        if params.offset != 1 or params.limit != DEFAULT_LIMIT:
            what += f" (lines {params.offset}-{params.offset + params.limit - 1})"
        return what

    async def run(self, params: FsReadParams, ctx: ToolContext) -> str:
        path = resolve(ctx, params.path)
        name = ctx.relative(path)
        live = ctx.documents.live_text(path)
        if live is not None:
            window = _slice(split_lines(live), params.offset, params.limit)
        else:
            # A huge file is refused whole, but a window of it asked for by offset/limit is read.
            windowed = bool(params.model_fields_set & {"offset", "limit"})
            window = await asyncio.to_thread(
                _from_disk, ctx, path, params.offset, params.limit, windowed
            )
        if window.total == 0:
            if params.offset > 1:
                raise ToolError(f"offset {params.offset} is past the end of {name}, which is empty")
            return f"{name} is empty"
        if not window.lines:
            raise ToolError(
                f"offset {params.offset} is past the end of {name}, which has {window.total} lines"
            )
        return _render(window, params.offset, ctx.settings.max_read_bytes)


def _slice(lines: list[str], offset: int, limit: int) -> _Window:
    chosen = lines[offset - 1 : offset - 1 + limit]
    return _Window(chosen, len(lines), more=offset - 1 + limit < len(lines))


def _from_disk(ctx: ToolContext, path: Path, offset: int, limit: int, windowed: bool) -> _Window:
    if check_file(ctx, path) <= MAX_FILE_BYTES or not windowed:
        return _slice(split_lines(read_disk(ctx, path)), offset, limit)
    # Too large to hold whole: stream to the window and stop just past it.
    name = ctx.relative(path)
    wanted: list[bytes] = []
    more = False
    count = 0
    with path.open("rb") as stream:
        refuse_binary(name, stream.read(SNIFF_BYTES))
        stream.seek(0)
        for count, raw in enumerate(stream, start=1):
            if count < offset:
                continue
            if len(wanted) == limit:
                more = True
                break
            wanted.append(raw)
    lines = [decode(name, raw).removesuffix("\n").removesuffix("\r") for raw in wanted]
    return _Window(lines, None if more else count, more)


def _render(window: _Window, first: int, budget: int) -> str:
    width = min(MAX_LINE_CHARS, budget // 2)
    rows: list[str] = []
    shortened: list[int] = []
    used = 0
    capped = False
    for number, line in enumerate(window.lines, start=first):
        long = len(line) > width
        if long:
            line = f"{line[:width]}… [{len(line) - width} more characters]"
        row = f"{number:>6}\t{line}\n"
        if used + len(row) > budget:
            capped = True
            break
        if long:
            shortened.append(number)
        rows.append(row)
        used += len(row)
    last = first + len(rows) - 1
    of_total = f" of {window.total}" if window.total is not None else ""
    notes: list[str] = []
    if shortened:
        listed = ", ".join(map(str, shortened[:10])) + (", ..." if len(shortened) > 10 else "")
        notes.append(f"[lines shortened to {width} characters: {listed}]")
    if capped:
        notes.append(
            f"[output capped at {budget} characters: showed lines {first}-{last}{of_total}; "
            f"continue with offset={last + 1}]"
        )
    elif window.more:
        notes.append(
            f"[showed lines {first}-{last}{of_total or ' (more follow)'}; "
            f"continue with offset={last + 1}]"
        )
    return ("".join(rows) + "\n".join(notes)).removesuffix("\n")
