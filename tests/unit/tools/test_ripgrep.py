"""ripgrep as the tools run it (``tether.tools.ripgrep``): its root judged right before it
starts, text fed through its stdin, and every process killed however the call ends."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import pytest

from tests.unit.tools import context, fifo, gone, recorded_pids, sleepers, write
from tether.errors import ToolError
from tether.tools import ripgrep
from tether.tools.base import ToolContext


def rg() -> str:
    found = ripgrep.find_rg()
    assert found is not None
    return found


async def files(ctx: ToolContext, top: Path) -> list[str]:
    async with ripgrep.running(rg(), ["--files"], ctx, top) as proc:
        assert proc is not None
        out, _ = await proc.communicate()
    return sorted(out.decode().split())


async def test_the_root_is_judged_right_before_ripgrep_starts(tmp_path: Path) -> None:
    write(tmp_path, "outside/id_rsa", "KEY\n")
    ws = tmp_path / "ws"
    write(ws, "docs/readme.md", "")
    ctx = context(ws)
    assert await files(ctx, ctx.workspace / "docs") == ["docs/readme.md"]
    (ws / "docs/readme.md").unlink()
    (ws / "docs").rmdir()
    (ws / "docs").symlink_to(tmp_path / "outside")  # moved since the call was planned
    with pytest.raises(ToolError, match=r"docs now resolves outside the workspace"):
        await files(ctx, ctx.workspace / "docs")
    # Approved, ripgrep gets the real path, never the link.
    approved = context(ws, approved=True)
    real = (tmp_path / "outside").resolve()
    assert await files(approved, real) == [f"{real}/id_rsa"]
    with pytest.raises(ToolError, match=r"changed while it was being searched"):
        await files(approved, approved.workspace / "docs")


@pytest.mark.timeout(10)
async def test_a_fifo_is_never_handed_to_ripgrep(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    pipe = fifo(ctx.workspace, "pipe")
    with pytest.raises(ToolError, match=r"pipe is neither a directory nor a regular file"):
        await files(ctx, pipe)
    with pytest.raises(ToolError, match=r"no such file or directory: gone"):
        await files(ctx, ctx.workspace / "gone")


async def test_text_is_searched_through_stdin(tmp_path: Path) -> None:
    data = b"one\ntwo TODO\n" * 50_000  # more than a pipe holds at once
    async with ripgrep.searching_text(rg(), ["--count", "TODO"], data, tmp_path) as proc:
        assert proc is not None and proc.stdout is not None
        out = await proc.stdout.read()
    assert out.decode().strip() == "50000"


async def test_cancelling_kills_every_ripgrep_it_started(tmp_path: Path) -> None:
    sleeper, pid_file = sleepers(tmp_path / "rg")
    ctx = context(tmp_path)

    async def search_all() -> None:
        async with (
            ripgrep.running(str(sleeper), [], ctx, ctx.workspace) as tree,
            ripgrep.searching_text(str(sleeper), [], b"x\n" * 100_000, tmp_path) as text,
        ):
            assert tree is not None and text is not None
            await asyncio.sleep(30)

    task = asyncio.ensure_future(search_all())
    pids = await recorded_pids(pid_file, 2)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert [pid for pid in pids if not gone(pid)] == []
