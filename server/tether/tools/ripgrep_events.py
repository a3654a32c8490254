"""What a search found, and how ripgrep's JSON events become it.

ripgrep prints an event per line; most are read no further than their first bytes (a
match past ``max_results`` only counts, and only up to ``COUNT_PAST`` more), and a
file's name is decoded only when one of its matches is shown.
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tether.errors import ToolError
from tether.tools import ripgrep

MAX_LINE_CHARS = 300
COUNT_PAST = 10_000  # matches counted beyond max_results before the search gives up counting
# ripgrep's JSON events start with their type: most lines are read no further.
_MATCH, _BEGIN, _END = b'{"type":"match"', b'{"type":"begin"', b'{"type":"end"'
_EVENTS = json.JSONDecoder()


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


async def collect(
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
                    shown = name_of(os.fsdecode(_raw(_event(begin)["data"]["path"])))
                    begin = None
                if full:  # past max_results only the count matters
                    wanted = begin is not None or shown is not None
                    if wanted and not found.count(limit):
                        return found, finished
                    continue
                if shown is None:
                    continue  # a file whose matches are not wanted
                data = _event(raw)["data"]
                line = _raw(data["lines"])
                at = data["submatches"][0]["start"] if data["submatches"] else 0
                text = line.decode(errors="replace").removesuffix("\n").removesuffix("\r")
                start = len(line[:at].decode(errors="replace"))  # ripgrep counts bytes
                if not found.add(shown, data["line_number"], text, start, limit):
                    return found, finished
            elif raw.startswith(_BEGIN):
                begin, shown = raw, None
            elif raw and not raw.startswith(_END):
                finished |= _event(raw)["type"] == "summary"
    return found, finished


def _event(raw: bytes) -> Any:
    """One event: a JSON object alone on its line, as ripgrep prints it (UTF-8: text that
    is not is base64), read without ``json.loads``'s checks for the whitespace around it
    and for what follows, which cost two-thirds again as much as the reading itself."""
    return _EVENTS.raw_decode(raw.decode("utf-8", "surrogatepass"))[0]


def _raw(value: dict[str, Any]) -> bytes:
    """ripgrep's JSON carries text that is not UTF-8 as base64 "bytes"."""
    return base64.b64decode(value["bytes"]) if "bytes" in value else str(value["text"]).encode()


def _clip(text: str, start: int) -> str:
    if len(text) <= MAX_LINE_CHARS:
        return text
    begin = max(0, min(start - MAX_LINE_CHARS // 3, len(text) - MAX_LINE_CHARS))
    return ("…" if begin else "") + text[begin : begin + MAX_LINE_CHARS] + "…"
