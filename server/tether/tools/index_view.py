"""What the tools ask of the workspace index (``tether.index``), which lives below them: the
files a regex can match at all, the files under a directory, and the definitions. A tool
runs the same without it (``NoIndex``): every search runs ripgrep."""

from __future__ import annotations

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


class Index(Protocol):
    """The workspace index (``tether.index``): which files a regex can match at all, and
    the definitions in the workspace."""

    async def candidates(self, pattern: str, ignore_case: bool) -> list[bytes] | None:
        """The files that may hold a match, in no order, by their workspace-relative
        names ("/"-separated bytes: thousands of them cost nothing as ``Path``s would);
        None when it cannot tell (still building, or a pattern it cannot narrow): then
        every file is searched."""
        ...

    async def files(self, under: bytes) -> list[bytes] | None:
        """The files ``files.walk`` keeps in the directory ``under`` and below it (b"":
        the whole workspace), by their workspace-relative names, in no order; None when
        it cannot tell (still building, or not told of changes)."""
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

    async def files(self, under: bytes) -> list[bytes] | None:
        return None

    def unsure(self) -> None:
        pass

    def changed(self, paths: Iterable[Path]) -> None:
        pass

    async def symbols(
        self, query: str, kind: str | None, under: Path, live: dict[Path, str]
    ) -> Symbols | None:
        return None
