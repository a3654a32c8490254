"""Which files the index must read again at start, and which it holds that are gone.

In a git workspace git says what may have changed since the index was last brought up
to date (``changes``): only those files are looked at. Elsewhere, or where git cannot
tell, or when an ignore file changed (which files belong may have changed), the
workspace is walked (names only) and each file's size and mtime compared with what the
index recorded. Either way a file is read again only when its size or mtime differ.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from tether.index import changes
from tether.index.database import Database
from tether.index.in_thread import in_thread
from tether.index.reading import absolute, belongs, relative, stamp, workspace_files

_IGNORE_FILES = (b".gitignore",)


def _no_one(files: int) -> None:
    pass


@dataclass
class Stale:
    read: list[Path] = field(default_factory=list)  # to read again
    gone: list[bytes] = field(default_factory=list)  # to drop
    files: int = 0  # the workspace's files, as far as this pass knows
    how: str = "walk"  # or "git"


async def stale(
    root: Path, db: Database, also: Iterable[bytes] = (), expect: Callable[[int], None] = _no_one
) -> tuple[Stale, changes.GitState | None]:
    """What must be read again, and git's state now (to record once it has been);
    ``also``: files told changed since then, which git may no longer list (reverted).
    A walk tells ``expect`` (from its thread) how many files it has found to read so far."""
    now = await changes.state(root)
    before = await in_thread(_recorded, root, db)
    if now is not None and before is not None:
        paths = await changes.changed(root, before, now)
        if paths is not None:
            paths |= set(also)
        if paths is not None and not any(os.path.basename(p) in _IGNORE_FILES for p in paths):
            return await in_thread(_some, root, db, paths), now
    return await in_thread(_walked, root, db, expect), now


def record(root: Path, db: Database, now: changes.GitState | None) -> None:
    """Remember git's state (and .git/info/exclude's) as of the files just read."""
    db.set_meta("exclude", _exclude(root))
    if now is not None:
        db.set_meta("git_head", now.head)
        db.set_meta("git_dirty", ",".join(sorted(path.hex() for path in now.dirty)))


def _recorded(root: Path, db: Database) -> changes.GitState | None:
    """git's state when the index was last brought up to date; None when there is none to
    go by (a new index, or .git/info/exclude changed since)."""
    head, dirty = db.meta("git_head"), db.meta("git_dirty")
    if head is None or dirty is None or not db.count() or _exclude(root) != db.meta("exclude"):
        return None
    return changes.GitState(head, frozenset(bytes.fromhex(x) for x in dirty.split(",") if x))


def _exclude(root: Path) -> str:
    """.git/info/exclude's size and mtime: a change to it changes which files belong."""
    found = stamp(root / ".git" / "info" / "exclude")
    return "" if found is None else f"{found[0]}:{found[1]}"


def _some(root: Path, db: Database, paths: set[bytes]) -> Stale:
    known = db.known()
    out = Stale(how="git")
    for rel in sorted(paths):
        path = absolute(root, rel)
        if belongs(root, path):
            if known.get(rel) != stamp(path):
                out.read.append(path)
        elif rel in known:
            out.gone.append(rel)
    out.files = len(known) + len([p for p in out.read if relative(root, p) not in known])
    return out


def _walked(root: Path, db: Database, expect: Callable[[int], None]) -> Stale:
    known = db.known()
    if not known:  # a first build: every file is read, nothing is gone, no stamp to compare
        read: list[Path] = []
        for path in workspace_files(root):  # (41,381 files: 0.4 s of 1.1 s in the stamps)
            read.append(path)
            expect(len(read))
        return Stale(read=read, files=len(read))
    out = Stale()
    present: set[bytes] = set()
    for path in workspace_files(root):
        rel = relative(root, path)
        present.add(rel)
        if known.get(rel) != stamp(path):
            out.read.append(path)
            expect(len(out.read))
    out.gone = [rel for rel in known if rel not in present]
    out.files = len(present)
    return out
