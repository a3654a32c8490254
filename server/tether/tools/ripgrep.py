"""ripgrep as the read-only tools run it: a process of its own that sees what ``files.walk`` sees.

The flags make it agree with the walk: hidden files are seen, ``.git`` never is,
symbolic links are not followed, and only the ``.gitignore`` files plus
``.git/info/exclude`` count, whether or not the workspace is a git repository.
Given a subdirectory, ripgrep reads the ignore files inside it; the rules above
it reach it as an ``--ignore-file`` (``files.rules_above``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from tether.tools.base import ToolContext
from tether.tools.ignore import rules_above

_CHUNK = 2**18
_LINE_LIMIT = 64 * 2**20
FLAGS = (
    *("--no-config", "--no-require-git", "--hidden", "--glob", "!.git"),
    *("--no-ignore-global", "--no-ignore-parent", "--no-ignore-dot", "--sort", "path"),
    *("--path-separator", "/"),  # paths print as the tools show them, on Windows too
)


def find_rg() -> str | None:
    """The ``rg`` the ``ripgrep`` wheel put beside this interpreter, else one on PATH."""
    beside = Path(sys.executable).parent / ("rg.exe" if os.name == "nt" else "rg")
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which("rg")


@contextlib.asynccontextmanager
async def running(
    rg: str, args: Sequence[str], ctx: ToolContext, top: Path
) -> AsyncIterator[asyncio.subprocess.Process | None]:
    """ripgrep run with ``args`` on ``top`` from the workspace root, or None if it cannot start.

    Its stdout and stderr are pipes. On the way out it is killed if still running:
    a cancelled call leaves nothing behind.
    """
    above = [] if top == ctx.workspace else await asyncio.to_thread(rules_above, ctx.workspace, top)
    try:
        ignore = _ignore_file(above) if above else None  # here: a cancelled thread would leak it
    except OSError:
        yield None  # without the rules above top its answer would be wrong
        return
    try:
        extra = ("--ignore-file", ignore) if ignore else ()
        try:
            proc = await asyncio.create_subprocess_exec(
                *(rg, *FLAGS, *extra, *args, "--", ctx.relative(top)),
                cwd=ctx.workspace,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError:
            yield None
            return
        try:
            yield proc
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
    finally:
        if ignore:
            with contextlib.suppress(OSError):
                os.unlink(ignore)


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
