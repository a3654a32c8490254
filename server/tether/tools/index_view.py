"""What the tools ask of the workspace index (``tether.index``), which lives below them: the
files a regex can match at all, the files under a directory, and the definitions. A tool
runs the same without it (``NoIndex``): every search runs ripgrep."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class SymbolHit:
    """One definition the index found: where, what kind (class, function...), its name."""

    path: Path
    line: int
    kind: str
    name: str


@dataclass(frozen=True)
class Symbols:
    """What the index found for a query, best first, and how many text files of the
    workspace's ``files`` are ``unread``: its pass taking their definitions is not over."""

    hits: list[SymbolHit]
    unread: int = 0
    files: int = 0


@dataclass(frozen=True)
class Kept:
    """The files ``files.walk`` keeps in the workspace, by their workspace-relative names
    ("/"-separated, decoded as ``os.fsdecode`` decodes them), and every directory holding
    one: what a listing is checked against, made once for each state of the index."""

    files: frozenset[str]
    dirs: frozenset[str]

    @classmethod
    def of(cls, names: list[bytes]) -> Kept:
        """From the index's names, as bytes."""
        if not names:
            return cls(frozenset(), frozenset())
        # Decoded all at once (no name holds NUL): a name at a time costs twice as much.
        return cls.named(b"\0".join(names).decode(_ENCODING, _ERRORS).split("\0"))

    @classmethod
    def named(cls, files: Iterable[str]) -> Kept:
        kept = frozenset(files)
        dirs: set[str] = set()
        for parent in {name.rpartition("/")[0] for name in kept}:
            while parent and parent not in dirs:
                dirs.add(parent)
                parent = parent.rpartition("/")[0]
        return cls(kept, frozenset(dirs))


_ENCODING, _ERRORS = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()


class Index(Protocol):
    """The workspace index (``tether.index``): which files a regex can match at all, and
    the definitions in the workspace."""

    async def candidates(self, pattern: str, ignore_case: bool) -> list[bytes] | None:
        """The files that may hold a match, in no order, by their workspace-relative
        names ("/"-separated bytes: thousands of them cost nothing as ``Path``s would);
        None when it cannot tell (still building, or a pattern it cannot narrow): then
        every file is searched."""
        ...

    async def kept(self) -> Kept | None:
        """The files ``files.walk`` keeps in the workspace; None when it cannot tell
        (still building, or not told of changes)."""
        ...

    async def symbols(
        self, query: str, kind: str | None, under: Path, live: dict[Path, str]
    ) -> Symbols | None:
        """Definitions whose names match ``query`` (fuzzily), best first, in files under
        ``under``, of the files whose definitions the index has taken so far; ``live``:
        open documents' text, read instead of the disk. None: the index cannot answer
        (off, not built, or not told of changes)."""
        ...

    def unsure(self) -> None:
        """A call that may change files ran: the next search catches up with the disk."""
        ...

    def changed(self, paths: Iterable[Path]) -> None:
        """These files were created, changed or deleted: read again before the next search."""
        ...


class NoIndex:
    async def candidates(self, pattern: str, ignore_case: bool) -> list[bytes] | None:
        return None

    async def kept(self) -> Kept | None:
        return None

    def unsure(self) -> None:
        pass

    def changed(self, paths: Iterable[Path]) -> None:
        pass

    async def symbols(
        self, query: str, kind: str | None, under: Path, live: dict[Path, str]
    ) -> Symbols | None:
        return None
