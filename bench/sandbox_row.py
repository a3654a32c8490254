"""Row: the sandbox's start-up cost per command: ``true`` run by the command tool in the
sandbox against the same tool running it bare (goal: at most 15 ms more)."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

from bench.timing import Measure, Row, interleaved, ms, ratio
from tether.config import SandboxSettings, ToolsSettings
from tether.tools.base import NoDocuments, ToolContext
from tether.tools.command import Command, CommandParams
from tether.tools.sandbox import check


async def row(workspace: Path, reps: int) -> Row:
    sandbox = check(SandboxSettings())
    if not sandbox.used:
        return Row("command `true`, sandboxed", "n/a", "n/a", "n/a", sandbox.cause[:60])
    bare = ToolContext(workspace, NoDocuments(), ToolsSettings())
    boxed = replace(bare, sandbox=sandbox)
    command, params = Command(), CommandParams(command="true")

    def timed(ctx: ToolContext) -> Measure:
        async def once() -> float:
            start = time.perf_counter()
            await command.run(params, ctx)
            return time.perf_counter() - start

        return once

    inside, outside = await interleaved(timed(boxed), timed(bare), reps)
    extra = inside - outside
    return Row(
        "command `true`, sandboxed",
        ms(inside),
        ms(outside),
        ratio(inside, outside),
        f"bwrap adds {ms(extra)} per command (goal ≤ 15 ms)",
    )
