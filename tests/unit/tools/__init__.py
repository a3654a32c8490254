"""Helpers shared by the tool tests: a workspace context, editor buffers, real git repos."""

from __future__ import annotations

import asyncio
import itertools
import os
import subprocess
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.config import ToolsSettings
from tether.index.workspace import WorkspaceIndex
from tether.tools.base import Documents, NoDocuments, Tool, ToolContext


class Buffers:
    """The editor's open documents, as a dict of path -> unsaved text."""

    def __init__(self, texts: dict[Path, str] | None = None) -> None:
        self.texts = dict(texts or {})

    def live_text(self, path: Path) -> str | None:
        return self.texts.get(path)

    def open_paths(self) -> list[Path]:
        return list(self.texts)

    def unsaved(self) -> list[Path]:
        """Buffers whose text differs from the file on disk (or whose file is gone)."""
        return [
            path
            for path, text in self.texts.items()
            if not path.is_file() or path.read_text(errors="replace") != text
        ]


def context(
    workspace: Path,
    documents: Documents | None = None,
    max_read_bytes: int = 100_000,
    approved: bool = False,
) -> ToolContext:
    """A tool's context in ``workspace``; ``approved``: as for a call the person allowed."""
    return ToolContext(
        workspace=workspace.resolve(),
        documents=documents or NoDocuments(),
        settings=ToolsSettings(max_read_bytes=max_read_bytes),
        approved=approved,
    )


async def followed_index(ws: Path, tmp_path: Path) -> WorkspaceIndex:
    """``ws``'s index, built in ``tmp_path`` and following its changes: it answers."""
    index = WorkspaceIndex(ws, tmp_path / "index.sqlite3")
    await index.build()
    index.follow()
    return index


def write(root: Path, rel: str, content: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


async def call(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> str:
    return await tool.run(tool.params.model_validate(arguments), ctx)


def read_only(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> bool:
    return tool.read_only(tool.params.model_validate(arguments), ctx)


def summary(tool: Tool[Any], ctx: ToolContext, **arguments: Any) -> str:
    return tool.summary(tool.params.model_validate(arguments), ctx)


def git(repo: Path, *args: str) -> str:
    config = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
    config += ["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
    done = subprocess.run(
        ["git", *config, *args], cwd=repo, check=True, capture_output=True, text=True
    )
    return done.stdout


def init_repo(repo: Path) -> Path:
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q")
    return repo.resolve()


def sleeper(path: Path) -> tuple[Path, Path]:
    """An executable at ``path`` that records its pid, then sleeps: a hung subprocess."""
    pid_file = path.parent / f"{path.name}.pid"
    write(path.parent, path.name, f"#!/bin/sh\necho $$ > {pid_file}\nexec sleep 30\n").chmod(0o755)
    return path, pid_file


def recorded_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text())
    except (FileNotFoundError, ValueError):
        return None  # not started yet, or half written


async def started(pid_file: Path, within_s: float = 5.0) -> int:
    """The pid a subprocess records in ``pid_file``, once it has started."""
    try:
        async with asyncio.timeout(within_s):
            while (pid := recorded_pid(pid_file)) is None:
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"the subprocess never wrote {pid_file.name}") from None
    return pid


async def cancel_once_started(task: asyncio.Future[str], pid_file: Path) -> int:
    """Cancel ``task`` once its subprocess is running; the subprocess's pid."""
    pid = await started(pid_file)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        return pid
    raise AssertionError("the call finished instead of being cancelled")


def marked(needle: str) -> list[int]:
    """Live processes (not zombies) whose command line holds ``needle`` (Linux: /proc),
    found whatever PID namespace (a sandbox) they run in."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if entry.name.isdigit() and state not in ("Z", "X") and needle.encode() in line:
            found.append(int(entry.name))
    return sorted(found)


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def ignore_maze(root: Path) -> Path:
    """A tree where .gitignore rules at several levels, symlinks and empty directories meet.

    Every file says TODO. The tools' ripgrep paths and their Python fallbacks
    must see exactly the same entries in it, from the root or any directory.
    """
    write(root, ".git/HEAD", "ref: refs/heads/main\n")
    write(root, ".git/info/exclude", "secret.txt\n")
    write(root, ".gitignore", "*.log\nbuild/\n/top-only.txt\nnode_modules/\n")
    write(root, "src/.gitignore", "!keep.log\ngen/\n/anchored.txt\ndeep/skip.txt\n")
    write(root, "src/deep/.gitignore", "!*.log\n")
    for rel in [
        *("a.log", "top-only.txt", "secret.txt", "build/out.js", "node_modules/pkg/index.js"),
        *("src/keep.log", "src/drop.log", "src/top-only.txt", "src/anchored.txt", "src/main.py"),
        *("src/secret.txt", "src/gen/x.py", "src/deep/a.log", "src/deep/anchored.txt"),
        *("src/deep/skip.txt", "src/deep/gen/y.py", "src/deep/z.py", "logs/only.log"),
        *(".hidden/conf.py", "sub/a.txt", "a b/c d.txt"),
    ]:
        write(root, rel, "TODO\n")
    write(root, "sub/.git", "gitdir: elsewhere\n")
    (root / "empty/nested").mkdir(parents=True)
    (root / "link-dir").symlink_to("src")
    (root / "link-file").symlink_to("src/main.py")
    (root / "link-ignored.log").symlink_to("src/main.py")
    (root / "broken").symlink_to("nowhere")
    (root / "src/up").symlink_to("..")
    return root.resolve()


MAZE_DIRS = [".", "src", "src/deep", "node_modules", "logs", "empty", "sub"]


def sleepers(path: Path) -> tuple[Path, Path]:
    """An executable at ``path`` that appends its pid to a file, then sleeps: each process
    it starts is a hung subprocess, and every pid is recorded."""
    pid_file = path.parent / f"{path.name}.pids"
    write(path.parent, path.name, f"#!/bin/sh\necho $$ >> {pid_file}\nexec sleep 30\n").chmod(0o755)
    return path, pid_file


async def recorded_pids(pid_file: Path, count: int, within_s: float = 5.0) -> list[int]:
    """The pids ``count`` subprocesses appended to ``pid_file``, once they all have."""
    try:
        async with asyncio.timeout(within_s):
            while True:
                try:
                    pids = [int(line) for line in pid_file.read_text().split()]
                except (FileNotFoundError, ValueError):
                    pids = []
                if len(pids) >= count:
                    return pids
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"fewer than {count} subprocesses wrote {pid_file.name}") from None


def bytes_name(root: Path, name: bytes, content: bytes = b"") -> Path:
    """A file whose name is bytes that need not be UTF-8 (as git stores names), as Python
    sees it: its undecodable bytes held as lone surrogates."""
    full = os.path.join(os.fsencode(root), name)
    with open(full, "wb") as file:
        file.write(content)
    return Path(os.fsdecode(full))


def fifo(root: Path, rel: str) -> Path:
    """A named pipe nobody writes to: opening it for reading the usual way blocks forever."""
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


@dataclass
class Timed:
    result: str
    seconds: float
    longest_stall: float  # the longest the event loop went without running another task


async def responsive(work: Awaitable[str]) -> Timed:
    """Await ``work`` while a ticker measures how long the event loop is held at a time."""
    start = time.monotonic()
    ticks = [start]

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.01)
            ticks.append(time.monotonic())

    ticker = asyncio.ensure_future(tick())
    try:
        result = await work
    finally:
        ticker.cancel()
    end = time.monotonic()
    ticks.append(end)  # a loop held to the end never ticked at all
    stall = max(later - earlier for earlier, later in itertools.pairwise(ticks))
    return Timed(result, end - start, max(0.0, stall - 0.01))
