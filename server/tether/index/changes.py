"""What changed in a git workspace since the index was last brought up to date, told by git
rather than by a walk: the commits between the HEAD then and now, and what ``git status``
lists then and now (modified, staged, deleted, untracked). A file in none of those is
what HEAD holds, as it was when the index read it.

git runs as tether's read-only git tools run it: with every program the repository's own
config names neutralised (no fsmonitor, no hooks, no filters), and with no global
excludes file, so that it ignores what the walk ignores: ``.gitignore`` files and
``.git/info/exclude``. Where git cannot tell (no repository at the workspace root, no
HEAD recorded, git missing or failing) the caller walks the workspace instead.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from tether.tools.environment import child_environment
from tether.tools.git_config import ENV, as_arguments, repository_overrides


@dataclass(frozen=True)
class GitState:
    head: str
    dirty: frozenset[bytes]  # what ``git status`` lists, workspace-relative


async def state(root: Path) -> GitState | None:
    """HEAD and the files ``git status`` lists now; None when git cannot tell."""
    overrides = [*as_arguments(await repository_overrides(root)), "-c", "core.excludesFile="]
    # At once: each is a process to start, and a search after a command waits for them.
    prefix, head, status = await asyncio.gather(
        _git(root, overrides, "rev-parse", "--show-prefix"),
        _git(root, overrides, "rev-parse", "--verify", "-q", "HEAD"),
        _git(
            root,
            overrides,
            *("status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"),
            "--ignore-submodules=all",
        ),
    )
    if prefix is None or prefix.strip():
        return None  # a workspace inside a repository (or none): its paths are not git's
    if head is None or status is None:
        return None
    return GitState(head.strip().decode(), frozenset(_status_paths(status)))


async def changed(root: Path, before: GitState, now: GitState) -> set[bytes] | None:
    """The files that may differ from what the index read at ``before``; None when git
    cannot tell."""
    paths = set(before.dirty | now.dirty)
    if before.head != now.head:
        overrides = [*as_arguments(await repository_overrides(root)), "-c", "core.excludesFile="]
        diff = await _git(
            root,
            overrides,
            "diff",
            "--name-only",
            "-z",
            "--no-renames",
            before.head,
            now.head,
            "--",
        )
        if diff is None:
            return None
        paths |= {name for name in diff.split(b"\0") if name}
    return paths


def _status_paths(output: bytes) -> list[bytes]:
    """The paths of ``git status --porcelain=v1 -z --no-renames``: "XY path" each."""
    return [entry[3:] for entry in output.split(b"\0") if len(entry) > 3]


async def _git(root: Path, overrides: list[str], *args: str) -> bytes | None:
    """git's output, or None when it failed or is missing."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *("git", "--no-pager", "--no-optional-locks", *overrides, *args),
            cwd=root,
            env={**child_environment(()), **ENV},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return None
    try:
        out, _ = await proc.communicate()
    finally:
        if proc.returncode is None:  # cancelled: git must not outlive the build
            proc.kill()
            await proc.wait()
    return out if proc.returncode == 0 else None
