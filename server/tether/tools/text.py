"""A file's text as the tools read it: the editor's live buffer first, else the disk, and
only text (binary, non-UTF-8 and huge files are refused with a reason the model can act on).

Every read of a file's content goes through ``open_checked``, the one checked open: a
regular file only (opened without blocking, so a FIFO never hangs a read), and the file
actually opened inside the workspace (its descriptor's real path, not the path asked
for: a symlink may move between a check and an open) unless the person approved the call.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from tether.errors import ToolError
from tether.tools.base import ToolContext, live_text
from tether.tools.paths import allow, named
from tether.tools.regular import SNIFF_BYTES, open_regular

MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_SEARCHED_LINE = 16 * 2**20  # the Python search reads no more of one line than this


# A file this small is read on the event loop, a larger one in a thread (so the loop never
# waits long on the disk): the hop to a thread and back waits for the GIL behind a reply's
# other reads. The bench's reply of 8 reads read two files of 229 and 110 KB: 0.75 ms of
# CPU each, and 2.4 ms from their start in a thread to their end.
ON_LOOP_BYTES = 256 * 1024


def small_on_disk(path: Path) -> bool:
    """Whether the file at ``path`` is small enough now to be read on the loop (the read
    that follows judges the file itself, as every read does)."""
    try:
        return os.stat(path).st_size <= ON_LOOP_BYTES
    except OSError:
        return False  # the read says what is wrong


async def load_text(ctx: ToolContext, path: Path) -> str:
    """The editor's live text when the document is open, else the file on disk (a large
    one read in a thread)."""
    live = await live_text(ctx, path)
    if live is not None:
        return live
    if small_on_disk(path):
        return read_disk(ctx, path)
    return await asyncio.to_thread(read_disk, ctx, path)


def open_checked(ctx: ToolContext, path: Path) -> BinaryIO:
    """The one checked open of a file a tool reads (``path`` already resolved).

    Nothing outside the workspace (or inside .git/) is opened unless ``ctx.approved``;
    then the file that was opened is judged by its descriptor's real path, so a
    symlink swapped in between is caught.
    """
    name = named(ctx, path)
    allow(ctx, path, name)
    file = open_regular(path, name)
    try:
        allow(ctx, _opened_path(file.fileno(), path, name), name)
    except BaseException:
        file.close()
        raise
    return file


def _opened_path(fd: int, path: Path, name: str) -> Path:
    """Where the open descriptor ``fd`` really is."""
    if sys.platform.startswith("linux"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            link = ""  # no /proc: judge it as other platforms do
        if link.startswith("/"):
            return Path(link)
    if sys.platform == "darwin":
        import fcntl

        try:
            found = fcntl.fcntl(fd, fcntl.F_GETPATH, bytes(1024))
        except OSError:
            found = b""
        if found.startswith(b"/"):
            return Path(os.fsdecode(found.split(b"\0", 1)[0]))
    # Elsewhere: resolve the path again and make sure it is the very file that is open.
    real = Path(os.path.realpath(path))
    try:
        there = os.stat(real)
    except OSError:
        there = None
    opened = os.fstat(fd)
    if there is None or (there.st_dev, there.st_ino) != (opened.st_dev, opened.st_ino):
        raise ToolError(f"{name} changed while it was being opened; call it again")
    return real


def read_disk(ctx: ToolContext, path: Path) -> str:
    name = named(ctx, path)
    with open_checked(ctx, path) as file:
        refuse_huge(name, os.fstat(file.fileno()).st_size)
        data = file.read(MAX_FILE_BYTES + 1)
    refuse_huge(name, len(data))  # it grew since
    return decode(name, data)


def refuse_huge(name: str, size: int) -> None:
    if size > MAX_FILE_BYTES:
        raise ToolError(
            f"{name} is too large ({size / 2**20:.1f} MB; the limit is "
            f"{MAX_FILE_BYTES // 2**20} MB): fs-read it in parts with offset/limit, "
            "or search it with index-grep"
        )


def refuse_binary(name: str, head: bytes) -> None:
    if b"\0" in head[:SNIFF_BYTES]:
        raise ToolError(f"{name} is a binary file; only text files can be read")


def decode(name: str, data: bytes) -> str:
    refuse_binary(name, data)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolError(f"{name} is not UTF-8 text; only text files can be read") from None


def split_lines(text: str) -> list[str]:
    """Lines as editors and ripgrep number them: split on \\n, a trailing \\r dropped."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if "\r" not in text:  # most files: the lines as they are, at no cost a line
        return lines
    return [line.removesuffix("\r") for line in lines]


def disk_lines(ctx: ToolContext, path: Path) -> Iterator[str]:
    """A file's lines decoded leniently, as ripgrep reads them; none for a binary file or
    one that cannot be read (not a regular file, outside the workspace). A line is read
    up to ``MAX_SEARCHED_LINE`` bytes; the rest of it is skipped."""
    try:
        stream = open_checked(ctx, path)
    except ToolError:
        return
    with stream:
        try:
            if b"\0" in stream.read(SNIFF_BYTES):
                return
            stream.seek(0)
            while raw := stream.readline(MAX_SEARCHED_LINE):
                if not raw.endswith(b"\n"):
                    while (rest := stream.readline(MAX_SEARCHED_LINE)) and not rest.endswith(b"\n"):
                        pass
                yield raw.decode(errors="replace").removesuffix("\n").removesuffix("\r")
        except OSError:
            return
