"""A file's text as the tools read it (``tether.tools.text``): the editor's buffer first,
then the disk, and only text."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import pytest

from tests.unit.tools import Buffers, context, fifo, write
from tether.errors import ToolError
from tether.tools.text import (
    MAX_FILE_BYTES,
    MAX_SEARCHED_LINE,
    disk_lines,
    load_text,
    open_checked,
    split_lines,
)


async def test_load_text_prefers_the_editors_unsaved_text(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "on disk\n").resolve()
    ctx = context(tmp_path, Buffers({path: "unsaved\n"}))
    assert await load_text(ctx, path) == "unsaved\n"
    assert await load_text(context(tmp_path), path) == "on disk\n"


async def test_load_text_reads_an_open_document_that_is_not_on_disk(tmp_path: Path) -> None:
    path = context(tmp_path).workspace / "new.py"
    assert await load_text(context(tmp_path, Buffers({path: "x = 1\n"})), path) == "x = 1\n"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "img.png is a binary file"),
        ("caf\u00e9".encode("latin-1"), "img.png is not UTF-8 text"),
    ],
)
async def test_load_text_refuses_binary_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = write(tmp_path, "img.png", content).resolve()
    with pytest.raises(ToolError, match=message):
        await load_text(context(tmp_path), path)


async def test_load_text_says_what_is_missing_or_a_directory(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    with pytest.raises(ToolError, match=r"no such file: src/x.py"):
        await load_text(ctx, ctx.workspace / "src/x.py")
    (tmp_path / "src").mkdir()
    with pytest.raises(ToolError, match=r"src is a directory"):
        await load_text(ctx, ctx.workspace / "src")


async def test_load_text_refuses_huge_files_and_says_how_to_read_them(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(ToolError, match=r"too large.*offset/limit.*index-grep"):
        await load_text(context(tmp_path), path.resolve())


def test_split_lines_numbers_lines_as_editors_do() -> None:
    assert split_lines("a\r\nb\n\nc") == ["a", "b", "", "c"]
    assert split_lines("a\n") == ["a"]
    assert split_lines("a\x0cb\u2028c") == ["a\x0cb\u2028c"]
    assert split_lines("") == []


@pytest.mark.timeout(10)  # the bug is a read that never returns
async def test_a_fifo_is_refused_at_once_not_waited_on(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    pipe = fifo(ctx.workspace, "pipe.txt")
    with pytest.raises(ToolError, match=r"pipe.txt is a FIFO \(named pipe\); only regular files"):
        await asyncio.wait_for(load_text(ctx, pipe), 5)
    assert list(disk_lines(ctx, pipe)) == []  # a search skips it
    (ctx.workspace / "link.txt").symlink_to(pipe)
    with pytest.raises(ToolError, match=r"link.txt is a FIFO"):
        open_checked(ctx, ctx.workspace / "link.txt")


def test_a_socket_is_refused(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    path = ctx.workspace / "s.sock"
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(path))
        with pytest.raises(ToolError, match=r"s.sock is a socket; only regular files"):
            open_checked(ctx, path)


def test_the_file_opened_is_judged_not_the_path_asked_for(tmp_path: Path) -> None:
    """A path judged inside whose last link leads outside by the time it is opened (a
    symlink swapped between the check and the open): the open descriptor tells."""
    write(tmp_path, "outside/id_rsa", "KEY\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    ctx = context(ws)
    swapped = ctx.workspace / "notes.txt"  # as resolved before the swap
    swapped.symlink_to(tmp_path / "outside/id_rsa")
    with pytest.raises(ToolError, match=r"notes.txt now resolves outside the workspace"):
        open_checked(ctx, swapped)
    assert list(disk_lines(ctx, swapped)) == []
    with open_checked(context(ws, approved=True), swapped) as file:
        assert file.read() == b"KEY\n"


def test_the_file_opened_inside_git_is_judged_too(tmp_path: Path) -> None:
    write(tmp_path, ".git/config", "token\n")
    ctx = context(tmp_path)
    (ctx.workspace / "a.txt").symlink_to(ctx.workspace / ".git/config")
    with pytest.raises(ToolError, match=r"a.txt now resolves inside \.git/"):
        open_checked(ctx, ctx.workspace / "a.txt")


def test_disk_lines_reads_a_long_line_only_so_far(tmp_path: Path) -> None:
    path = write(tmp_path, "a.txt", b"x" * (MAX_SEARCHED_LINE + 10) + b"\nnext\n")
    lines = list(disk_lines(context(tmp_path), path.resolve()))
    assert [len(line) for line in lines] == [MAX_SEARCHED_LINE, 4]
