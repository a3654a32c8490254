"""Row 3: the index-grep tool against running ripgrep directly with the tool's own flags."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from bench.timing import Row, interleaved, ms, ratio
from tether.config import Settings
from tether.tools.base import NoDocuments, ToolContext
from tether.tools.index_grep import _RG_FLAGS, IndexGrep, IndexGrepParams
from tether.tools.ripgrep import find_rg

PATTERNS: list[tuple[str, str, bool]] = [  # what, pattern, case-sensitive
    ("literal", "def __init__", True),
    ("regex", r"raise \w+Error\(", True),
    ("alternation", "TODO|XXX|FIXME", True),
    ("ignore case", "copyright", False),
]


async def rows(workspace: Path, reps: int) -> list[Row]:
    rg = find_rg()
    if rg is None:
        return [Row("index-grep vs rg", "", "", "", "no rg found: skipped")]
    settings = Settings.load({}, {})
    ctx = ToolContext(workspace, NoDocuments(), settings.tools)
    tool = IndexGrep()
    return [await _row(rg, ctx, tool, p, reps) for p in PATTERNS]


async def _row(
    rg: str, ctx: ToolContext, tool: IndexGrep, case_: tuple[str, str, bool], reps: int
) -> Row:
    what, pattern, case = case_
    params = IndexGrepParams(pattern=pattern, case_sensitive=case)
    argv = [rg, *_RG_FLAGS, "--case-sensitive" if case else "--ignore-case"]
    argv += ["--regexp", pattern, "--", "."]
    matches = 0

    async def tether() -> float:
        start = time.perf_counter()
        await tool.run(params, ctx)
        return time.perf_counter() - start

    async def direct() -> float:
        nonlocal matches
        start = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=ctx.workspace,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
        stdout, _ = await proc.communicate()
        took = time.perf_counter() - start
        matches = stdout.count(b'{"type":"match"')
        return took

    mine, theirs = await interleaved(tether, direct, reps)
    extra = (mine - theirs) / max(matches, 1)
    note = f"/{pattern}/{'' if case else 'i'}: {matches} matching lines, all read by both; "
    note += f"tether adds {extra * 1e6:.0f} µs per matching line"
    what = f"index-grep vs `rg --json`: {what}"
    return Row(what, ms(mine), ms(theirs), ratio(mine, theirs), note)
