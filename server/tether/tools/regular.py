"""Opening a file that must be a regular one, without ever blocking: the one open under
every read of a file's content, the tools' (``text.open_checked``) and the index's.

It imports nothing of the tools' models, so that a process reading files alone (the
index's workers) starts without them: pydantic and the settings cost a worker 0.16 s.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

from tether.errors import ToolError

SNIFF_BYTES = 8192  # a NUL in this much of a file's head makes it binary, as for ripgrep
# Never wait on open (a FIFO with no writer), never take a terminal, never leak into children.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_FLAGS |= getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
_KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
}


def open_regular(path: Path, name: str) -> BinaryIO:
    """``path`` opened for reading if it is a regular file; a ToolError saying what it is if
    not. Opening never blocks: a FIFO is refused, not waited on."""
    fd, _ = opened_regular(path, name)
    try:
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def opened_regular(path: Path, name: str) -> tuple[int, os.stat_result]:
    """``open_regular``'s descriptor, with the status it was judged by, for the caller to
    read and close: the index reads tens of thousands of files, each once, whole."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise ToolError(f"no such file: {name}") from None
    except OSError as exc:  # a socket cannot be opened at all (ENXIO)
        _refuse_special(_mode(path), name)
        raise ToolError(f"cannot read {name}: {exc.strerror}") from None
    try:
        status = os.fstat(fd)
        _refuse_special(status.st_mode, name)
    except BaseException:
        os.close(fd)
        raise
    return fd, status


def _mode(path: Path) -> int:
    try:
        return os.stat(path).st_mode
    except OSError:
        return stat.S_IFREG


def _refuse_special(mode: int, name: str) -> None:
    if stat.S_ISDIR(mode):
        raise ToolError(f"{name} is a directory; fs-list shows what it holds")
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise ToolError(f"{name} is {kind}; only regular files can be read")
