"""A file's text as the tools read it (``tether.tools.text``): the editor's buffer first,
then the disk, and only text."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.tools import Buffers, context, write
from tether.errors import ToolError
from tether.tools.text import MAX_FILE_BYTES, load_text, split_lines


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
