from __future__ import annotations

import io
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.tools import Buffers, bytes_name, call, context, fifo, write
from tether.errors import ToolError
from tether.tools.fs_read import (
    MAX_LINE_CHARS,
    FsRead,
    FsReadParams,
    _render,
    _slice,
    _stream,
    _Window,
)
from tether.tools.text import MAX_FILE_BYTES, ON_LOOP_BYTES, split_lines

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
    ctx = context(ws, approved=True)
    assert await call(READ, ctx, path="../outside.txt") == numbered(1, "hello")
    assert await call(READ, ctx, path="link.txt") == numbered(1, "hello")


async def test_an_unapproved_read_outside_the_workspace_is_refused_when_it_runs(
    tmp_path: Path,
) -> None:
    write(tmp_path, "outside.txt", "hello\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "link.txt").symlink_to(tmp_path / "outside.txt")
    for path in ("../outside.txt", "link.txt", str(tmp_path / "outside.txt")):
        with pytest.raises(ToolError, match=r"now resolves outside the workspace; call it again"):
            await call(READ, context(ws), path=path)


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


def huge(path: Path, *lines: bytes) -> Path:
    """A file past the size fs-read holds whole: ``lines``, then padding lines."""
    with path.open("wb") as f:
        for line in lines:
            f.write(line)
        f.write(b"pad\n")
        while f.tell() <= MAX_FILE_BYTES:
            f.write(b"pad\n" * 65536)
    return path


async def peak_bytes(coroutine: object) -> tuple[str, int]:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = await coroutine  # type: ignore[misc]
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


async def test_skipped_lines_are_counted_not_held(tmp_path: Path) -> None:
    huge(tmp_path / "huge.log", b"x" * (30 * 2**20) + b"\n", b"second\n")
    out, peak = await peak_bytes(call(READ, context(tmp_path), path="huge.log", offset=2, limit=1))
    assert (
        out == numbered(2, "second") + "\n[showed lines 2-2 (more follow); continue with offset=3]"
    )
    assert peak < 8 * 2**20  # a 30 MB first line was skipped in bounded chunks


async def test_a_line_in_the_window_is_kept_only_as_far_as_it_is_shown(tmp_path: Path) -> None:
    long = "é" * (30 * 2**20 // 2) + "\r\n"  # 30 MB, 15 million characters, a CRLF end
    huge(tmp_path / "huge.log", long.encode(), b"next\n")
    read = call(READ, context(tmp_path), path="huge.log", limit=2)
    out, peak = await peak_bytes(read)
    first, second, *notes = out.splitlines()
    shown = 15 * 2**20 - MAX_LINE_CHARS
    assert first == f"     1\t{'é' * MAX_LINE_CHARS}… [{shown} more characters]"
    assert second == "     2\tnext"
    assert notes[0] == "[lines shortened to 2000 characters: 1]"
    assert peak < 16 * 2**20


async def test_a_streamed_window_stops_at_what_the_output_can_show(tmp_path: Path) -> None:
    huge(tmp_path / "huge.log", b"line\n" * 1000)
    out = await call(READ, context(tmp_path, max_read_bytes=1000), path="huge.log", limit=10**9)
    assert out.splitlines()[-1] == (
        "[output capped at 1000 characters: showed lines 1-83; continue with offset=84]"
    )


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(["a", "é", "\n", "\r", "€", "😀"]), max_size=40),
    offset=st.integers(1, 12),
    limit=st.integers(1, 12),
    chunk=st.integers(1, 9),
)
def test_streaming_reads_the_same_window_as_holding_the_file(
    text: str, offset: int, limit: int, chunk: int
) -> None:
    """Whatever the chunk boundaries (inside a line, a character, a CRLF), the stream shows
    what holding the whole file shows."""
    whole = _slice(text, offset, limit)
    streamed = _stream(io.BytesIO(text.encode()), "f", offset, limit, chunk)
    assert streamed.lines == whole.lines
    assert streamed.more == whole.more
    assert streamed.total == (None if whole.more else whole.total)
    assert streamed.cut == [0] * len(streamed.lines)


def test_streaming_keeps_a_long_lines_head_and_counts_the_rest() -> None:
    data = ("ab" * 3000 + "\r\n" + "€" * 2001 + "\n").encode()
    window = _stream(io.BytesIO(data), "f", 1, 5, chunk_size=7)
    assert window.lines == ["ab" * 1000, "€" * 2000]
    assert window.cut == [4000, 1]
    assert (window.total, window.more) == (2, False)


async def test_a_stream_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    huge(tmp_path / "huge.log", b"ok\n", b"caf\xe9\n")
    with pytest.raises(ToolError, match=r"huge.log is not UTF-8 text"):
        await call(READ, context(tmp_path), path="huge.log", limit=3)


@pytest.mark.timeout(10)
async def test_a_fifo_is_refused_promptly(tmp_path: Path) -> None:
    fifo(tmp_path, "pipe")
    for arguments in ({}, {"offset": 2}):
        with pytest.raises(ToolError, match=r"pipe is a FIFO \(named pipe\); only regular files"):
            await call(READ, context(tmp_path), path="pipe", **arguments)


async def test_a_name_that_is_not_utf8_is_read_by_its_escaped_name(tmp_path: Path) -> None:
    bytes_name(tmp_path, b"caf\xe9.txt", b"bonjour\n")
    bytes_name(tmp_path, b"empty\xff", b"")
    ctx = context(tmp_path)
    assert await call(READ, ctx, path="caf\\xe9.txt") == numbered(1, "bonjour")
    assert await call(READ, ctx, path="empty\\xff") == "empty\\xff is empty"
    with pytest.raises(ToolError, match=r"no such file: nothing\\xe9"):
        await call(READ, ctx, path="nothing\\xe9")
    with pytest.raises(ToolError, match=r"invalid path"):
        await call(READ, ctx, path="a\ud800b")


def _rows_one_by_one(window: _Window, first: int, budget: int) -> str:
    """The rows ``_render`` shows, made and counted one at a time: the plain reading."""
    width = min(MAX_LINE_CHARS, budget // 2)
    shown, used = [], 0
    cuts = window.cut or [0] * len(window.lines)
    numbers = range(first, first + len(window.lines))
    for number, line, cut in zip(numbers, window.lines, cuts, strict=True):
        length = len(line) + cut
        text = line if length <= width else f"{line[:width]}… [{length - width} more characters]"
        row = f"{number:>6}\t{text}\n"
        if used + len(row) > budget:
            break
        shown.append(row)
        used += len(row)
    return "".join(shown)


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.text(alphabet="ab%s\t€", max_size=40), max_size=30),
    first=st.sampled_from([1, 7, 999_990, 999_999, 12_345_678]),
    budget=st.integers(min_value=0, max_value=800),
    cut=st.booleans(),
)
def test_rows_are_counted_against_the_budget_as_made_one_by_one(
    lines: list[str], first: int, budget: int, cut: bool
) -> None:
    """Rows counted before they are made, numbers wider than six digits and shortened
    lines among them, stop where making them one by one stops."""
    cuts = [len(line) * 3 for line in lines] if cut else []
    window = _Window(lines, len(lines), more=False, cut=cuts)
    rows = _rows_one_by_one(window, first, budget)
    rendered = _render(window, first, budget) + "\n"  # its last newline is dropped
    assert rendered.startswith(rows)
    notes = rendered[len(rows) :]
    assert notes in ("", "\n") or notes.startswith(("[lines shortened", "[output capped"))
    shown = rows.count("\n")
    if shown < len(lines):
        assert f"showed lines {first}-{first + shown - 1} of {len(lines)}; continue" in notes


@settings(max_examples=400, deadline=None)
@given(
    text=st.text(alphabet="a\r\n€", max_size=40),
    offset=st.integers(min_value=1, max_value=12),
    limit=st.integers(min_value=1, max_value=12),
)
def test_a_window_holds_the_lines_split_lines_numbers(text: str, offset: int, limit: int) -> None:
    """Only the lines up to the window's end are made; they are the lines, and the count,
    that splitting the whole text gives."""
    lines = split_lines(text)
    window = _slice(text, offset, limit)
    assert window.lines == lines[offset - 1 : offset - 1 + limit]
    assert window.total == len(lines)
    assert window.more == (offset - 1 + limit < len(lines))


async def test_a_small_file_is_read_on_the_loop_a_large_one_in_a_thread(
    tmp_path: Path, threaded: list[str]
) -> None:
    """A hop to a thread waits for the GIL behind a reply's other reads; a large file's
    read does not hold the loop."""
    small = write(tmp_path, "small.py", "x = 1\n" * (ON_LOOP_BYTES // 6))
    large = write(tmp_path, "large.py", "x = 1\n" * (ON_LOOP_BYTES // 6 + 1))
    ctx = context(tmp_path, max_read_bytes=10**7)

    assert f"of {ON_LOOP_BYTES // 6};" in await call(READ, ctx, path="small.py")
    assert threaded == [] and small.stat().st_size <= ON_LOOP_BYTES
    assert f"of {ON_LOOP_BYTES // 6 + 1};" in await call(READ, ctx, path="large.py")
    assert threaded == ["_from_disk"] and large.stat().st_size > ON_LOOP_BYTES
