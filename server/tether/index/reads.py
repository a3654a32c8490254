"""What the index reads of the disk, on a worker thread, into its database: a batch of
files, the definitions of files not parsed yet, and the changes it was told of."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from tether.index.database import Database, Seen
from tether.index.reading import absolute, belongs, examine, relative
from tether.index.symbols import Definition, definitions, supported
from tether.tools.ignore import enters, walk_files


def read(
    root: Path, db: Database, paths: list[Path], gone: Iterable[bytes] = (), define: bool = False
) -> None:
    """Read ``paths`` into the index and drop ``gone``; ``define``: take the files'
    definitions now too (a few files changed, rather than the whole build)."""
    seen: list[Seen] = []
    lost: list[bytes] = list(gone)
    for path in paths:
        file = examine(root, path)
        if file is None:
            lost.append(relative(root, path))
        else:
            seen.append(file)
    db.put(seen, lost)
    if define:
        db.put_definitions(
            [
                (file.rel, definitions(text, _suffix(file.rel)))
                for file in seen
                if file.kind == "text" and (text := file.text) is not None  # decoded once
            ]
        )


def define_batch(root: Path, db: Database, size: int) -> int:
    """Take the definitions of up to ``size`` files not parsed yet; how many there were."""
    batch = db.unparsed(size)
    found: list[tuple[bytes, list[Definition]]] = []
    for rel in batch:
        path = absolute(root, rel)
        file = examine(root, path) if supported(path.name) else None
        text = file.text if file is not None else None
        found.append((rel, definitions(text, path.suffix) if text is not None else []))
    db.put_definitions(found)
    return len(batch)


def apply(root: Path, db: Database, paths: set[Path]) -> set[bytes]:
    """Apply the changes told (files created, changed or deleted, directories made or
    moved); the workspace-relative names told."""
    keep: list[Path] = []
    dropped: list[bytes] = []
    told: set[bytes] = set()
    for path in paths:
        if not path.is_relative_to(root) or path == root:
            continue
        rel = relative(root, path)
        told.add(rel)
        if belongs(root, path):
            keep.append(path)
            continue
        dropped += [rel, *db.below(rel)]  # a file gone, or a directory and all below
        if enters(root, path):
            keep += walk_files(root, path)  # a directory moved or made here
    read(root, db, keep, dropped, define=True)
    return told


def _suffix(rel: bytes) -> str:
    return os.path.splitext(os.fsdecode(rel))[1]
