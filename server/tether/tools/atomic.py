"""Writing a file all at once: a reader sees the old file or the new one, never half."""

from __future__ import annotations

import contextlib
import os
import stat
import uuid
from pathlib import Path


def write_atomically(path: Path, text: str | bytes) -> None:
    """Replace ``path`` with ``text`` (or bytes) all at once, keeping its mode; parents are created.

    The text goes to a temporary file beside it, is flushed to disk, then renamed
    over it: a reader sees the old file or the new one, never half of either.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None  # a new file: 0o666 less the umask, as any editor would make it
    temp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tether-tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(text.encode("utf-8") if isinstance(text, str) else text)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    _sync_dir(path.parent)


def _sync_dir(directory: Path) -> None:
    """Make the rename itself durable, where the platform allows it (not on Windows)."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
