"""Which files the index holds, and what it keeps of each: the walk the tools use, and one
read of each file that classifies it as ripgrep would treat it.

The files are exactly those ``tools.ignore.walk_files`` yields for the workspace (the
reference for "a file of the workspace": .gitignore'd files, ``.git/`` and symbolic
links left out). A file is read once, through the same non-blocking open of a regular
file the tools use, and kept as its trigrams ("text", ``trigrams``) or as a kind that
says how a search must treat it (see ``database.Kind``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tether.errors import ToolError
from tether.index.database import Kind
from tether.tools.ignore import excluded, posix_below, walk_files
from tether.tools.regular import SNIFF_BYTES, opened_regular

MAX_INDEXED_BYTES = 2 * 2**20  # larger files are searched whole, every time
_CHUNK = 2**20
_GROWN = 2**16  # below malloc's threshold for a mapping of its own
_WIDE_BOMS = (b"\xff\xfe", b"\xfe\xff")


@dataclass(frozen=True)
class File:
    """One file as it was read, whole: how a search must treat it, and its bytes."""

    rel: bytes  # workspace-relative, "/"-separated
    mtime_ns: int
    size: int
    kind: Kind
    data: bytes | None  # a "text" or "late" file's bytes, whole

    @property
    def text(self) -> str | None:
        return None if self.data is None else self.data.decode(errors="replace")


def relative(root: Path, path: Path) -> bytes:
    """``path`` under ``root``, "/"-separated; ValueError when it is not under it."""
    return os.fsencode(posix_below(root, path))


def absolute(root: Path, rel: bytes) -> Path:
    return root / os.fsdecode(rel)


def workspace_files(root: Path) -> Iterator[Path]:
    """Every file the index should hold."""
    return walk_files(root, root)


def belongs(root: Path, path: Path) -> bool:
    """Whether ``path`` (named by a change notice) is a file the walk would yield."""
    if path == root or not path.is_relative_to(root):
        return False
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISREG(mode) and not excluded(root, root, path)


def stamp(path: Path) -> tuple[int, int] | None:
    """A file's mtime and size as its directory entry says; None if it is no regular file."""
    try:
        status = os.lstat(path)
    except OSError:
        return None
    return (status.st_mtime_ns, status.st_size) if stat.S_ISREG(status.st_mode) else None


def examine(root: Path, path: Path, cap: int = MAX_INDEXED_BYTES) -> File | None:
    """The file read and classified; None when it is gone or is no regular file."""
    try:
        fd, status = opened_regular(path, path.name)
    except ToolError:
        return None
    try:
        data = _head(fd, status.st_size, cap)
        kind = _kind(data)
        if len(data) > cap and kind == "text":
            kind = _rest(fd)
    except OSError:
        return None
    finally:
        os.close(fd)
    whole = len(data) <= cap
    kept = data if whole and kind in ("text", "late") else None
    return File(relative(root, path), status.st_mtime_ns, status.st_size, kind, kept)


def _head(fd: int, size: int, cap: int) -> bytes:
    """Up to ``cap`` + 1 bytes of the file, read by the size its status gave, then on (a
    file growing meanwhile) in small reads: a read asks for a buffer of the size it asks
    for, and a read of ``cap`` + 1 at once took one of 2 MiB for every file (the 7 KB of
    a typical source file read in 7 µs instead of 20)."""
    data = os.read(fd, min(size, cap) + 1)
    while len(data) <= cap and (more := os.read(fd, min(_GROWN, cap + 1 - len(data)))):
        data += more
    return data


def _kind(data: bytes) -> Kind:
    if data.startswith(_WIDE_BOMS):
        return "wide"
    nul = data.find(b"\0")
    if 0 <= nul < SNIFF_BYTES:
        return "binary"
    return "late" if nul >= 0 else "text"


def _rest(fd: int) -> Kind:
    """A file past the cap: "big", unless a NUL further on makes it "late" (and then it
    is searched whatever the pattern: its trigrams are not all known)."""
    while chunk := os.read(fd, _CHUNK):
        if b"\0" in chunk:
            return "late"
    return "big"
