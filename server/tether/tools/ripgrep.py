"""ripgrep as the read-only tools run it: a process of its own that sees what ``files.walk`` sees.

The flags make it agree with the walk: hidden files are seen, ``.git`` never is,
symbolic links are not followed, and only the ``.gitignore`` files plus
``.git/info/exclude`` count, whether or not the workspace is a git repository.
Given a subdirectory, ripgrep reads the ignore files inside it; the rules above
it reach it as an ``--ignore-file`` (``files.rules_above``).

Its root is judged right before it starts (a real path, inside the workspace unless the
call was approved, a directory or a regular file: never a FIFO), and however the call
ends (an answer, an error, a cancellation) the process is killed and reaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from tether.errors import ToolError
from tether.tools.base import ToolContext
from tether.tools.ignore import rules_above
from tether.tools.paths import allow, named

_CHUNK = 2**18
_LINE_LIMIT = 64 * 2**20
FLAGS = (
    *("--no-config", "--no-require-git", "--hidden", "--glob", "!.git"),
    *("--no-ignore-global", "--no-ignore-parent", "--no-ignore-dot", "--sort", "path"),
    *("--path-separator", "/"),  # paths print as the tools show them, on Windows too
)

Process = asyncio.subprocess.Process


def find_rg() -> str | None:
    """The ``rg`` the ``ripgrep`` wheel put beside this interpreter, else one on PATH."""
    beside = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


@contextlib.asynccontextmanager
async def running(
    rg: str, args: Sequence[str], ctx: ToolContext, top: Path
) -> AsyncIterator[Process | None]:
    """ripgrep run with ``args`` on ``top`` from the workspace root, or None if it cannot start.

    Its stdout and stderr are pipes; a ToolError when ``top`` may not be searched now.
    """
    above = [] if top == ctx.workspace else await asyncio.to_thread(rules_above, ctx.workspace, top)
    try:
        ignore = _ignore_file(above) if above else None  # here: a cancelled thread would leak it
    except OSError:
        yield None  # without the rules above top its answer would be wrong
        return
    try:
        extra = ("--ignore-file", ignore) if ignore else ()
        root = checked_root(ctx, top)
        async with _spawned(rg, (*FLAGS, *extra, *args, "--", root), ctx.workspace) as proc:
            yield proc
    finally:
        if ignore:
            with contextlib.suppress(OSError):
                os.unlink(ignore)


@contextlib.asynccontextmanager
async def listed(
    rg: str, args: Sequence[str], cwd: Path, names: Sequence[bytes]
) -> AsyncIterator[Process | None]:
    """ripgrep run with ``args`` on the files ``names`` (relative to ``cwd``, judged by the
    caller), or None if it cannot start."""
    async with _spawned(rg, (*FLAGS, *args, "--", *names), cwd) as proc:
        yield proc


def checked_root(ctx: ToolContext, top: Path) -> str:
    """``top`` as ripgrep is handed it: its real path, judged now (inside the workspace
    unless approved, a directory or a regular file), relative to the workspace root."""
    name = named(ctx, top)
    real = Path(os.path.realpath(top))
    allow(ctx, real, name)
    try:
        mode = os.stat(real).st_mode
    except OSError:
        raise ToolError(f"no such file or directory: {name}") from None
    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
        raise ToolError(f"{name} is neither a directory nor a regular file; it cannot be searched")
    if real != top:  # the callers show what ripgrep prints relative to ``top``
        raise ToolError(f"{name} changed while it was being searched; call it again")
    return ctx.relative(real)


@contextlib.asynccontextmanager
async def searching_text(
    rg: str, args: Sequence[str], data: bytes, cwd: Path
) -> AsyncIterator[Process | None]:
    """ripgrep run with ``args`` on ``data``, fed through its stdin; None if it cannot start."""
    async with _spawned(rg, ("--no-config", *args, "--", "-"), cwd, stdin=True) as proc:
        if proc is None:
            yield None
            return
        feeding = asyncio.ensure_future(_feed(proc, data))
        try:
            yield proc
        finally:
            feeding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await feeding


async def _feed(proc: Process, data: bytes) -> None:
    assert proc.stdin is not None
    with contextlib.suppress(OSError):  # ripgrep may stop reading: it has seen enough
        proc.stdin.write(data)
        await proc.stdin.drain()
        proc.stdin.close()


@contextlib.asynccontextmanager
async def _spawned(
    rg: str, args: Sequence[str | bytes], cwd: Path, stdin: bool = False
) -> AsyncIterator[Process | None]:
    """ripgrep started; on the way out, however it is left, killed if still running."""
    try:
        proc = await asyncio.create_subprocess_exec(
            rg,
            *args,
            cwd=cwd,
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError:
        yield None
        return
    try:
        yield proc
    finally:
        await stop(proc)


async def stop(proc: Process) -> None:
    """Kill ``proc`` unless it has ended, and reap it (even if the call is cancelled again)."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    await asyncio.shield(proc.wait())


def _ignore_file(lines: list[str]) -> str:
    """A temporary ignore file holding ``lines``; the caller removes it."""
    fd, name = tempfile.mkstemp(prefix="tether-rg-", suffix=".gitignore")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as file:
            file.write("\n".join(lines) + "\n")
    except OSError:
        os.unlink(name)
        raise
    return name


async def lines(stdout: asyncio.StreamReader) -> AsyncIterator[list[bytes]]:
    """ripgrep's output as lists of lines, read a large chunk at a time.

    ValueError for a line past ``_LINE_LIMIT``: ripgrep prints a matching line whole.
    """
    partial: list[bytes] = []  # the start of a line that is still being read
    size = 0
    while chunk := await stdout.read(_CHUNK):
        batch = chunk.split(b"\n")
        if partial:
            partial.append(batch[0])
            size += len(batch[0])
            if size > _LINE_LIMIT:
                raise ValueError("a line past the limit")
            if len(batch) == 1:
                continue
            batch[0] = b"".join(partial)
        partial = [batch.pop()]
        size = len(partial[0])
        yield batch
    if size:
        yield [b"".join(partial)]
