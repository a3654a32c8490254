"""A file's text as the tools read it: the editor's live buffer first, else the disk, and
only text (binary, non-UTF-8 and huge files are refused with a reason the model can act on)."""

from __future__ import annotations

import asyncio
import stat
from collections.abc import Iterator
from pathlib import Path

from tether.errors import ToolError
from tether.tools.base import ToolContext

MAX_FILE_BYTES = 20 * 1024 * 1024
SNIFF_BYTES = 8192


async def load_text(ctx: ToolContext, path: Path) -> str:
    """The editor's live text when the document is open, else the file on disk (read in a
    thread, so the loop never waits on the disk)."""
    live = ctx.documents.live_text(path)
    return live if live is not None else await asyncio.to_thread(read_disk, ctx, path)


def check_file(ctx: ToolContext, path: Path) -> int:
    """The size of a readable regular file; a ToolError the model can act on otherwise."""
    name = ctx.relative(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise ToolError(f"no such file: {name}") from None
    except OSError as exc:
        raise ToolError(f"cannot read {name}: {exc.strerror}") from None
    if stat.S_ISDIR(info.st_mode):
        raise ToolError(f"{name} is a directory; fs-list shows what it holds")
    return info.st_size


def read_disk(ctx: ToolContext, path: Path) -> str:
    name = ctx.relative(path)
    size = check_file(ctx, path)
    if size > MAX_FILE_BYTES:
        raise ToolError(
            f"{name} is too large ({size / 2**20:.1f} MB; the limit is "
            f"{MAX_FILE_BYTES // 2**20} MB): fs-read it in parts with offset/limit, "
            "or search it with index-grep"
        )
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ToolError(f"cannot read {name}: {exc.strerror}") from None
    return decode(name, data)


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
    return [line.removesuffix("\r") for line in lines]


def disk_lines(path: Path) -> Iterator[str]:
    """A file's lines decoded leniently, as ripgrep reads them; none for a binary file."""
    try:
        with path.open("rb") as stream:
            if b"\0" in stream.read(SNIFF_BYTES):
                return
            stream.seek(0)
            for raw in stream:
                yield raw.decode(errors="replace").removesuffix("\n").removesuffix("\r")
    except OSError:
        return
