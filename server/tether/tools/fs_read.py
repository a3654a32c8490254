"""``fs-read``: a text file's lines, numbered, from the editor's buffer when it is open."""

from __future__ import annotations

import asyncio
import codecs
import os
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.tools.base import ToolContext, live_text
from tether.tools.paths import checked, named, reads_inside, shown
from tether.tools.regular import SNIFF_BYTES
from tether.tools.text import (
    MAX_FILE_BYTES,
    decode,
    open_checked,
    refuse_binary,
    refuse_huge,
    small_on_disk,
)

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
_CHUNK = 2**20  # a file too large to hold is streamed this much at a time


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
    cut: list[int] = field(default_factory=list)  # characters not kept of each line, if any


class FsRead:
    name = "fs-read"
    reads = True  # its calls only read (one outside the workspace still asks)
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
        path = checked(ctx, params.path)
        name = named(ctx, path)
        live = await live_text(ctx, path)
        if live is not None:
            window = _slice(live, params.offset, params.limit)
        else:
            # A huge file is refused whole, but a window of it asked for by offset/limit is read.
            windowed = bool(params.model_fields_set & {"offset", "limit"})
            rows = ctx.settings.max_read_bytes // 8 + 1  # more than fit: a row is 8+ characters
            asked = (ctx, path, params.offset, min(params.limit, rows), windowed)
            if small_on_disk(path):
                window = _from_disk(*asked)
            else:
                window = await asyncio.to_thread(_from_disk, *asked)
        if window.total == 0:
            if params.offset > 1:
                raise ToolError(f"offset {params.offset} is past the end of {name}, which is empty")
            return f"{name} is empty"
        if not window.lines:
            raise ToolError(
                f"offset {params.offset} is past the end of {name}, which has {window.total} lines"
            )
        return _render(window, params.offset, ctx.settings.max_read_bytes)


def _slice(text: str, offset: int, limit: int) -> _Window:
    """Lines ``offset`` to ``offset + limit - 1`` of ``text``, as ``split_lines`` numbers
    them, and how many it has: only the lines up to the window's end are made (a window
    of 2,000 lines in a file of 6,400 made a third of the strings)."""
    total = text.count("\n") + (not text.endswith("\n") and text != "")
    end = min(offset - 1 + limit, total)
    chosen = text.split("\n", end)[offset - 1 : end]
    if "\r" in text:
        chosen = [line.removesuffix("\r") for line in chosen]
    return _Window(chosen, total, more=offset - 1 + limit < total)


def _from_disk(ctx: ToolContext, path: Path, offset: int, limit: int, windowed: bool) -> _Window:
    name = named(ctx, path)
    with open_checked(ctx, path) as file:
        size = os.fstat(file.fileno()).st_size
        if size > MAX_FILE_BYTES and windowed:
            return _stream(file, name, offset, limit)
        refuse_huge(name, size)
        data = file.read(MAX_FILE_BYTES + 1)
    refuse_huge(name, len(data))  # it grew since
    return _slice(decode(name, data), offset, limit)


def _stream(
    file: BinaryIO, name: str, offset: int, limit: int, chunk_size: int = _CHUNK
) -> _Window:
    """Lines ``offset`` to ``offset + limit - 1`` of a file too large to hold, read a chunk
    at a time: the lines before the window are counted, never kept, and of each line in it
    only the first ``MAX_LINE_CHARS`` characters are kept (the rest counted); it stops
    just past the window."""
    refuse_binary(name, file.read(SNIFF_BYTES))
    file.seek(0)
    lines: list[str] = []
    cut: list[int] = []
    line = _Line(name)
    number = 1  # the line the next byte read belongs to
    partial = False  # some of line ``number`` has been read
    while chunk := file.read(chunk_size):
        at = 0
        if number < offset:
            newlines = chunk.count(b"\n")
            if number + newlines < offset:
                number += newlines
                partial = not chunk.endswith(b"\n")
                continue
            while number < offset:
                at = chunk.index(b"\n", at) + 1
                number += 1
            partial = False
        while at < len(chunk):
            if len(lines) == limit:
                return _Window(lines, None, True, cut)
            end = chunk.find(b"\n", at)
            line.feed(chunk[at : len(chunk) if end < 0 else end])
            partial = True
            if end < 0:
                break
            lines.append(line.finish(cut))
            number, partial, at = number + 1, False, end + 1
    if partial and number >= offset:  # a last line with no newline
        lines.append(line.finish(cut))
        number, partial = number + 1, False
    return _Window(lines, number - 1 + partial, False, cut)


class _Line:
    """One line of a streamed window, decoded as it comes: its head kept, the rest counted."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._start()

    def _start(self) -> None:
        self.decoder = codecs.getincrementaldecoder("utf-8")()
        self.kept: list[str] = []
        self.size = self.dropped = 0
        self.last = ""

    def feed(self, data: bytes, final: bool = False) -> None:
        try:
            text = self.decoder.decode(data, final)
        except UnicodeDecodeError:
            raise ToolError(f"{self.name} is not UTF-8 text; only text files can be read") from None
        if not text:
            return
        room = max(0, MAX_LINE_CHARS - self.size)
        if room:
            self.kept.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - room)
        self.last = text[-1]

    def finish(self, cut: list[int]) -> str:
        """The line's kept text; how many characters were left out goes to ``cut``."""
        self.feed(b"", final=True)
        text, dropped = "".join(self.kept), self.dropped
        if self.last == "\r":  # a CRLF line end: the \r is no character of the line
            text, dropped = (text, dropped - 1) if dropped else (text[:-1], 0)
        self._start()
        cut.append(dropped)
        return text


def _render(window: _Window, first: int, budget: int) -> str:
    width = min(MAX_LINE_CHARS, budget // 2)
    texts = window.lines
    # The whole of a streamed line is the head it holds and the characters it left out.
    lengths = list(map(len, texts))
    if window.cut:
        lengths = [length + cut for length, cut in zip(lengths, window.cut, strict=True)]
    long = max(lengths, default=0) > width
    if long:
        texts = [
            text if length <= width else f"{text[:width]}… [{length - width} more characters]"
            for text, length in zip(texts, lengths, strict=True)
        ]
    numbers = range(first, first + len(texts))
    # A row is its number (six wide, wider past 999,999), a tab, its text and a newline:
    # the rows that fit are counted first, then made in one formatting of them all (a
    # third of the cost of making each row, then cutting).
    if len(str(numbers[-1] if numbers else 0)) <= 6:
        sizes: Iterable[int] = map((8).__add__, map(len, texts))
    else:
        pairs = zip(numbers, texts, strict=True)
        sizes = [max(6, len(str(n))) + 2 + len(text) for n, text in pairs]
    kept = bisect_right(list(accumulate(sizes)), budget)
    capped = kept < len(texts)
    shortened: list[int] = []
    if long:
        rows = zip(numbers[:kept], lengths[:kept], strict=True)
        shortened = [n for n, length in rows if length > width]
    cells: list[int | str] = [0] * (2 * kept)
    cells[0::2], cells[1::2] = numbers[:kept], texts[:kept]
    body = ("%6d\t%s\n" * kept) % tuple(cells)
    last = first + kept - 1
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
    return (body + "\n".join(notes)).removesuffix("\n")
