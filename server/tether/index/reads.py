"""What the index reads of the disk into its database: a batch of files, the definitions
of files not parsed yet, and the changes it was told of.

``examined`` and ``defined`` only read and compute (no database): they run on a worker
thread, or for a long pass in a worker process (``workers``); ``record`` and
``put_definitions`` write what they return.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, TypeVar

from tether.index import postings
from tether.index.database import Database, Seen
from tether.index.reading import File, absolute, belongs, examine, relative
from tether.index.trigrams import numbered, paired
from tether.tools.ignore import enters, walk_files

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from tether.index.symbols import Definition

Defined: TypeAlias = "list[tuple[bytes, list[Definition]]]"  # files' definitions, by names
D = TypeVar("D")


@dataclass(frozen=True)
class Batch:
    """Files read: what the index keeps of each, the names of those gone meanwhile, and
    (when asked for) their definitions."""

    seen: list[Seen]
    lost: list[bytes]
    defined: Defined | None


def examined(root: Path, paths: Sequence[Path], define: bool = False) -> Batch:
    """Read ``paths``; ``define``: take their definitions too."""

    def seen(n: int, file: File, document: str | None) -> Seen:
        return Seen(file.rel, file.mtime_ns, file.size, file.kind, document)

    return _read(root, paths, define, paired, seen)


def examined_into(
    root: Path, paths: Sequence[Path], define: bool, shard: Path, first_doc: int
) -> Batch:
    """``examined``, the documents written into ``shard`` already, as a segment of posting
    lists (numbered from ``first_doc``, one number a path): what a worker process does
    for a long pass."""
    numbers: list[npt.NDArray[np.uint16] | None] = []

    def seen(n: int, file: File, grams: npt.NDArray[np.uint16] | None) -> Seen:
        numbers.append(grams)
        doc = None if grams is None else first_doc + n
        return Seen(file.rel, file.mtime_ns, file.size, file.kind, None, doc)

    batch = _read(root, paths, define, numbered, seen)
    postings.write(shard, first_doc, postings.segment(numbers))
    return batch


def _read(
    root: Path,
    paths: Sequence[Path],
    define: bool,
    pairs: Callable[[Iterable[File], Callable[[File], bytes | None]], Iterator[tuple[File, D]]],
    seen: Callable[[int, File, D], Seen],
) -> Batch:
    """Read ``paths``, each file recorded as ``seen`` makes it of its place, itself and
    what ``pairs`` made of its text; ``define``: take their definitions too."""
    if define:  # tree-sitter only when asked: a long pass's reading workers start without it
        from tether.index.symbols import taken
    lost: list[bytes] = []

    def files() -> Iterator[File]:
        for path in paths:
            file = examine(root, path)
            if file is None:
                lost.append(relative(root, path))
            else:
                yield file

    records: list[Seen] = []
    found: Defined = []
    for n, (file, made) in enumerate(pairs(files(), lambda file: file.data)):
        records.append(seen(n, file, made))
        if define and file.kind == "text" and (text := file.text) is not None:
            found.append((file.rel, taken(file.rel, text)))
    return Batch(records, lost, found if define else None)


def record(db: Database, batch: Batch, gone: Iterable[bytes] = ()) -> None:
    """Write a batch read, and drop ``gone``."""
    db.put(batch.seen, [*gone, *batch.lost])
    if batch.defined is not None:
        db.put_definitions(batch.defined)


def read(
    root: Path, db: Database, paths: list[Path], gone: Iterable[bytes] = (), define: bool = False
) -> None:
    """Read ``paths`` into the index and drop ``gone``; ``define``: take the files'
    definitions now too (a few files changed, rather than the whole build)."""
    record(db, examined(root, paths, define), gone)


def defined(root: Path, rels: Sequence[bytes]) -> Defined:
    """The definitions of the files ``rels`` (none for a file gone, or in no language the
    index parses)."""
    from tether.index.symbols import supported, taken  # see ``examined``

    found: Defined = []
    for rel in rels:
        path = absolute(root, rel)
        file = examine(root, path) if supported(path.name) else None
        text = file.text if file is not None else None
        found.append((rel, taken(rel, text) if text is not None else []))
    return found


def define_batch(root: Path, db: Database, size: int) -> int:
    """Take the definitions of up to ``size`` files not parsed yet; how many there were."""
    batch = db.unparsed(size)
    db.put_definitions(defined(root, batch))
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
