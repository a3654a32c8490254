from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.tools import Buffers, call, context, write
from tether.errors import ToolError
from tether.tools.fs_read import FsRead, FsReadParams
from tether.tools.text import MAX_FILE_BYTES

READ = FsRead()


def numbered(first: int, *lines: str) -> str:
    return "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, start=first))


async def test_lines_are_numbered_from_one(tmp_path: Path) -> None:
    write(tmp_path, "src/a.py", "import os\r\n\nprint(os)\n")
    assert await call(READ, context(tmp_path), path="src/a.py") == numbered(
        1, "import os", "", "print(os)"
    )


async def test_offset_and_limit_pick_a_window_and_say_where_to_go_on(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "".join(f"line {n}\n" for n in range(1, 11)))
    out = await call(READ, context(tmp_path), path="a.txt", offset=4, limit=3)
    assert out == numbered(4, "line 4", "line 5", "line 6") + (
        "\n[showed lines 4-6 of 10; continue with offset=7]"
    )
    tail = await call(READ, context(tmp_path), path="a.txt", offset=9, limit=5)
    assert tail == numbered(9, "line 9", "line 10")


async def test_default_limit_is_2000_lines(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "x\n" * 2500)
    out = await call(READ, context(tmp_path), path="a.txt")
    assert out.count("\n") == 2000
    assert out.endswith("[showed lines 1-2000 of 2500; continue with offset=2001]")


async def test_output_is_capped_with_a_note_saying_where_to_continue(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "".join(f"{n:04}" + "x" * 95 + "\n" for n in range(1, 101)))
    out = await call(READ, context(tmp_path, max_read_bytes=1000), path="a.txt")
    shown = out.splitlines()[:-1]
    assert len(shown) == 9  # 9 rows of 6 + 1 + 99 + 1 = 107 characters fit in 1000
    assert out.splitlines()[-1] == (
        "[output capped at 1000 characters: showed lines 1-9 of 100; continue with offset=10]"
    )


async def test_very_long_lines_are_shortened_and_listed(tmp_path: Path) -> None:
    write(tmp_path, "min.js", "a" * 5000 + "\nshort\n")
    out = await call(READ, context(tmp_path), path="min.js")
    first, second, note = out.splitlines()
    assert first == f"     1\t{'a' * 2000}… [3000 more characters]"
    assert second == "     2\tshort"
    assert note == "[lines shortened to 2000 characters: 1]"


async def test_offset_past_the_end_is_an_error(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "one\ntwo\n")
    with pytest.raises(ToolError, match=r"offset 5 is past the end of a.txt, which has 2 lines"):
        await call(READ, context(tmp_path), path="a.txt", offset=5)


async def test_an_empty_file_says_so(tmp_path: Path) -> None:
    write(tmp_path, "empty.txt", "")
    assert await call(READ, context(tmp_path), path="empty.txt") == "empty.txt is empty"


async def test_unsaved_editor_text_is_read_instead_of_disk(tmp_path: Path) -> None:
    path = write(tmp_path, "a.py", "saved = 1\n").resolve()
    new = context(tmp_path).workspace / "new.py"
    ctx = context(tmp_path, Buffers({path: "unsaved = 2\n", new: "fresh = 3\n"}))
    assert await call(READ, ctx, path="a.py") == numbered(1, "unsaved = 2")
    assert await call(READ, ctx, path="new.py") == numbered(1, "fresh = 3")


async def test_binary_missing_and_directories_are_refused(tmp_path: Path) -> None:
    write(tmp_path, "src/img.png", b"\x89PNG\x00\x00")
    ctx = context(tmp_path)
    with pytest.raises(ToolError, match=r"src/img.png is a binary file"):
        await call(READ, ctx, path="src/img.png")
    with pytest.raises(ToolError, match=r"no such file: src/x.py"):
        await call(READ, ctx, path="src/x.py")
    with pytest.raises(ToolError, match=r"src is a directory"):
        await call(READ, ctx, path="src")


async def test_a_file_too_large_to_hold_is_read_in_parts(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as f:
        f.write(b"first\nsecond\n")
        f.write(b"x" * MAX_FILE_BYTES + b"\n")
        f.write(b"last\n")
    ctx = context(tmp_path)
    head = await call(READ, ctx, path="huge.log", limit=2)
    assert head == numbered(1, "first", "second") + (
        "\n[showed lines 1-2 (more follow); continue with offset=3]"
    )
    assert await call(READ, ctx, path="huge.log", offset=4) == numbered(4, "last")
    with pytest.raises(ToolError, match=r"offset 9 is past the end of huge.log, which has 4"):
        await call(READ, ctx, path="huge.log", offset=9)


async def test_a_huge_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "disk.img"
    with path.open("wb") as f:
        f.truncate(MAX_FILE_BYTES + 1)
    with pytest.raises(ToolError, match=r"binary"):
        await call(READ, context(tmp_path), path="disk.img", limit=10)


async def test_a_huge_file_read_whole_is_refused_with_the_way_to_read_it(tmp_path: Path) -> None:
    with (tmp_path / "huge.log").open("wb") as f:
        f.write(b"line\n" * (MAX_FILE_BYTES // 5 + 1))
    with pytest.raises(ToolError, match=r"too large.*offset/limit"):
        await call(READ, context(tmp_path), path="huge.log")


async def test_an_approved_read_outside_the_workspace_runs(tmp_path: Path) -> None:
    write(tmp_path, "outside.txt", "hello\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link.txt").symlink_to(tmp_path / "outside.txt")
    ctx = context(ws)
    assert await call(READ, ctx, path="../outside.txt") == numbered(1, "hello")
    assert await call(READ, ctx, path="link.txt") == numbered(1, "hello")


def test_summary_names_the_file_and_window(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    params = FsReadParams(path="./src/a.py", offset=10, limit=5)
    assert READ.summary(params, ctx) == "read src/a.py (lines 10-14)"
    assert READ.summary(FsReadParams(path="a.py"), ctx) == "read a.py"


def test_params_are_the_contracts() -> None:
    assert set(READ.params.model_json_schema()["properties"]) == {"path", "offset", "limit"}
    with pytest.raises(ValueError):
        READ.params.model_validate({"path": "a", "offset": 0})
    with pytest.raises(ValueError):
        READ.params.model_validate({"path": "a", "lines": 3})
