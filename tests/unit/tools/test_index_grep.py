from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from tests.unit.tools import (
    MAZE_DIRS,
    Buffers,
    bytes_name,
    call,
    cancel_once_started,
    context,
    fifo,
    gone,
    ignore_maze,
    init_repo,
    recorded_pids,
    responsive,
    sleeper,
    sleepers,
    summary,
    write,
)
from tether.errors import ToolError
from tether.tools.base import ToolContext
from tether.tools.index_grep import MAX_LINE_CHARS, IndexGrep
from tether.tools.ripgrep import find_rg

RG = IndexGrep()
PYTHON = IndexGrep(rg=lambda: None)  # the fallback: no ripgrep on this machine


@pytest.fixture(params=["rg", "python"])
def grep(request: pytest.FixtureRequest) -> IndexGrep:
    return RG if request.param == "rg" else PYTHON


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = init_repo(tmp_path / "ws")
    write(ws, ".gitignore", "*.log\ndist/\n")
    write(ws, "a.py", "def alpha():\n    return TODO\n")
    write(ws, "a/b.py", "# TODO: b\n")
    write(ws, "src/main.py", "import os\r\nprint('todo later')\r\n")
    write(ws, "src/view.ts", "// TODO ts\n")
    write(ws, "src/.gitignore", "!keep.log\n")
    write(ws, "src/keep.log", "TODO kept\n")
    write(ws, "debug.log", "TODO ignored\n")
    write(ws, "dist/bundle.js", "TODO built\n")
    write(ws, ".hidden/conf.py", "TODO hidden\n")
    write(ws, "image.bin", b"TODO\x00\x01\x02")
    write(ws, "latin.txt", "caf\u00e9 TODO\n".encode("latin-1"))
    write(ws, "wide.txt", "x" * 1000 + "TODO" + "y" * 1000 + "\n")
    (ws / "link.py").symlink_to(ws / "a.py")
    return ws


async def test_ripgrep_is_installed_with_the_package() -> None:
    assert find_rg() is not None


async def test_matches_are_path_line_text_in_path_order(grep: IndexGrep, tree: Path) -> None:
    out = await call(grep, context(tree), pattern="TODO", glob="*.py")
    assert out.splitlines() == [
        ".hidden/conf.py:1: TODO hidden",
        "a/b.py:1: # TODO: b",
        "a.py:2:     return TODO",
    ]


async def test_gitignore_git_binary_and_symlinks_are_skipped(grep: IndexGrep, tree: Path) -> None:
    write(tree, ".git/notes.txt", "TODO in git\n")
    out = await call(grep, context(tree), pattern="TODO")
    paths = [line.split(":")[0] for line in out.splitlines()]
    assert paths == [
        ".hidden/conf.py",
        "a/b.py",
        "a.py",
        "latin.txt",
        "src/keep.log",
        "src/view.ts",
        "wide.txt",
    ]


async def test_the_fallback_gives_the_same_results_as_ripgrep(tree: Path) -> None:
    live = tree / "src/view.ts"
    ctx = context(tree, Buffers({live: "// TODO unsaved\nconst todo = 1\n"}))
    cases: list[dict[str, Any]] = [
        {"pattern": "TODO"},
        {"pattern": "todo", "case_sensitive": False},
        {"pattern": r"^\s*return", "path": "."},
        {"pattern": "TODO", "glob": "src/**"},
        {"pattern": "TODO", "path": "src", "glob": "*.{ts,log}"},
        {"pattern": "o", "max_results": 3},
        {"pattern": "TODO", "path": "latin.txt"},  # not UTF-8: shown with U+FFFD
    ]
    for arguments in cases:
        assert await call(RG, ctx, **arguments) == await call(PYTHON, ctx, **arguments), arguments


async def test_case_sensitive_is_the_default(grep: IndexGrep, tree: Path) -> None:
    ctx = context(tree)
    assert await call(grep, ctx, pattern="todo", path="src") == "src/main.py:2: print('todo later')"
    out = await call(grep, ctx, pattern="todo", path="src", case_sensitive=False)
    assert out.splitlines() == [
        "src/keep.log:1: TODO kept",
        "src/main.py:2: print('todo later')",
        "src/view.ts:1: // TODO ts",
    ]


async def test_glob_with_a_path_matches_relative_paths(grep: IndexGrep, tree: Path) -> None:
    out = await call(grep, context(tree), pattern="TODO", glob="src/*.ts")
    assert out == "src/view.ts:1: // TODO ts"


async def test_max_results_cuts_with_a_count_of_the_rest(grep: IndexGrep, tmp_path: Path) -> None:
    write(tmp_path, "many.txt", "hit\n" * 25)
    out = await call(grep, context(tmp_path), pattern="hit", max_results=10)
    lines = out.splitlines()
    assert lines[:2] == ["many.txt:1: hit", "many.txt:2: hit"]
    assert len(lines) == 11
    assert lines[-1] == (
        "[15 more matching lines not shown; narrow with path or glob, or raise max_results]"
    )


async def test_unsaved_text_is_searched_instead_of_disk(grep: IndexGrep, tree: Path) -> None:
    ctx = context(
        tree,
        Buffers(
            {
                tree / "a.py": "def alpha():\n    return 'fixed'\n\n# TODO later\n",
                tree / "new.py": "TODO new\n",
                tree / "debug.log": "TODO still ignored\n",
            }
        ),
    )
    out = await call(grep, ctx, pattern="TODO", glob="*.py")
    assert out.splitlines() == [
        ".hidden/conf.py:1: TODO hidden",
        "a/b.py:1: # TODO: b",
        "a.py:4: # TODO later",
        "new.py:1: TODO new",
    ]
    assert await call(grep, ctx, pattern="TODO", path="new.py") == "new.py:1: TODO new"


async def test_long_lines_are_cut_around_the_match(grep: IndexGrep, tree: Path) -> None:
    out = await call(grep, context(tree), pattern="TODO", path="wide.txt")
    text = out.split(": ", 1)[1]
    assert "TODO" in text
    assert len(text) == MAX_LINE_CHARS + 2  # an ellipsis on each side


async def test_a_look_around_is_refused_with_the_syntax_to_use(grep: IndexGrep, tree: Path) -> None:
    # Neither engine backtracks (ripgrep's own, RE2): a look-around is no regex they take.
    with pytest.raises(ToolError, match=r"invalid regex 'TODO\(\?= ts\)'.*no look-around"):
        await call(grep, context(tree), pattern=r"TODO(?= ts)")


async def test_errors_say_what_is_wrong(grep: IndexGrep, tree: Path) -> None:
    ctx = context(tree)
    with pytest.raises(ToolError, match=r"invalid regex 'foo\(': missing \)"):
        await call(grep, ctx, pattern="foo(")
    with pytest.raises(ToolError, match=r"no such file or directory: nope"):
        await call(grep, ctx, pattern="x", path="nope")
    assert await call(grep, ctx, pattern="zzz", glob="*.md") == (
        "no matches for 'zzz' in . (files matching *.md)"
    )


async def test_patterns_that_look_like_options_are_searched(
    grep: IndexGrep, tmp_path: Path
) -> None:
    write(tmp_path, "cli.txt", "use --help here\n")
    assert await call(grep, context(tmp_path), pattern="--help") == "cli.txt:1: use --help here"


async def test_output_is_capped_by_max_read_bytes(grep: IndexGrep, tmp_path: Path) -> None:
    write(tmp_path, "many.txt", ("hit " + "x" * 95 + "\n") * 50)
    ctx: ToolContext = context(tmp_path, max_read_bytes=1000)
    lines = (await call(grep, ctx, pattern="hit")).splitlines()
    assert len(lines) == 9
    assert lines[-1].startswith("[42 more matching lines not shown")


def test_summary(tmp_path: Path) -> None:
    said = summary(RG, context(tmp_path), pattern=r"def \w+", path="src", glob="*.py")
    assert said == r"grep /def \w+/ in src (*.py)"
    assert set(RG.params.model_json_schema()["properties"]) == {
        "pattern",
        "path",
        "glob",
        "case_sensitive",
        "max_results",
    }


async def test_counting_stops_far_past_max_results(grep: IndexGrep, tmp_path: Path) -> None:
    write(tmp_path, "huge.txt", "hit\n" * 10_500)
    last = (await call(grep, context(tmp_path), pattern="hit")).splitlines()[-1]
    assert last.startswith("[10000+ more matching lines not shown")


async def test_cancelling_a_search_kills_ripgrep(tmp_path: Path) -> None:
    rg, pid_file = sleeper(tmp_path / "rg")
    ws = tmp_path / "ws"
    ws.mkdir()
    task = asyncio.ensure_future(call(IndexGrep(rg=lambda: str(rg)), context(ws), pattern="x"))
    assert gone(await cancel_once_started(task, pid_file))


async def test_ripgrep_and_the_fallback_search_the_same_files(tmp_path: Path) -> None:
    ctx = context(ignore_maze(tmp_path))
    for path in MAZE_DIRS:
        for glob in [None, "*.log", "deep/*"]:
            arguments = {"pattern": "TODO", "path": path, "glob": glob}
            assert await call(RG, ctx, **arguments) == await call(PYTHON, ctx, **arguments), (
                arguments
            )
    # The rules above a directory hold inside it: src/drop.log is ignored from the root.
    assert (await call(RG, ctx, pattern="TODO", path="src")).splitlines() == [
        "src/deep/a.log:1: TODO",
        "src/deep/anchored.txt:1: TODO",
        "src/deep/z.py:1: TODO",
        "src/keep.log:1: TODO",
        "src/main.py:1: TODO",
        "src/top-only.txt:1: TODO",
    ]


async def test_a_matching_line_longer_than_one_read_is_cut_around_the_match(
    grep: IndexGrep, tmp_path: Path
) -> None:
    write(tmp_path, "min.js", "x" * 1_000_000 + "NEEDLE" + "y" * 1000 + "\nNEEDLE 2\n")
    out = (await call(grep, context(tmp_path), pattern="NEEDLE")).splitlines()
    assert out[0] == "min.js:1: …" + "x" * 100 + "NEEDLE" + "y" * 194 + "…"
    assert out[1] == "min.js:2: NEEDLE 2"


@pytest.mark.timeout(60)
async def test_a_catastrophic_regex_neither_hangs_nor_holds_the_server(
    grep: IndexGrep, tmp_path: Path
) -> None:
    """``(a+)+$`` takes a backtracking engine seconds per line of 27 a's (and ages for a
    longer one), holding the interpreter: here no regex runs in it at all, or runs in RE2."""
    text = ("a" * 27 + "!\n") * 2
    write(tmp_path, "disk.txt", text)
    ctx = context(tmp_path, Buffers({context(tmp_path).workspace / "open.txt": text}))
    timed = await responsive(call(grep, ctx, pattern="(a+)+$"))
    assert timed.result == "no matches for '(a+)+$' in ."
    assert timed.seconds < 5 and timed.longest_stall < 1, timed


async def test_open_documents_are_searched_with_the_disks_semantics(tree: Path) -> None:
    """ripgrep reads the live text through its stdin: what it finds in a buffer is what it
    would find in the same text on disk."""
    text = "caf\u00e9 TODO\r\nx\tTODO$\n\u00c9t\u00e9 todo\n"
    write(tree, "disk.txt", text)
    ctx = context(tree, Buffers({tree / "live.txt": text}))
    for pattern in [r"TODO\r$", r"TODO.?$", r"\bTODO\b", "(?i)été", r"\p{Lu}", r"^\w+\s"]:
        out = (await call(RG, ctx, pattern=pattern, glob="*.txt")).splitlines()
        on_disk = [line.removeprefix("disk.txt") for line in out if line.startswith("disk.txt")]
        live = [line.removeprefix("live.txt") for line in out if line.startswith("live.txt")]
        assert live == on_disk and live, pattern


async def test_cancelling_a_search_kills_every_ripgrep_of_open_documents(tmp_path: Path) -> None:
    rg, pid_file = sleepers(tmp_path / "rg")
    (tmp_path / "ws").mkdir()
    ws = context(tmp_path / "ws").workspace
    documents = Buffers({ws / f"open{n}.py": "x\n" for n in range(3)})
    grep = IndexGrep(rg=lambda: str(rg))
    task = asyncio.ensure_future(call(grep, context(ws, documents), pattern="x"))
    pids = await recorded_pids(pid_file, 4)  # the disk, and each open document
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert task.cancelled()
    assert [pid for pid in pids if not gone(pid)] == []


@pytest.mark.timeout(30)
async def test_a_fifo_is_skipped_or_refused_promptly(grep: IndexGrep, tmp_path: Path) -> None:
    write(tmp_path, "src/a.py", "TODO\n")
    fifo(tmp_path, "src/pipe.py")
    ctx = context(tmp_path)
    assert await asyncio.wait_for(call(grep, ctx, pattern="TODO", path="src"), 10) == (
        "src/a.py:1: TODO"
    )
    with pytest.raises(ToolError, match=r"src/pipe.py is neither a directory nor a regular file"):
        await asyncio.wait_for(call(grep, ctx, pattern="TODO", path="src/pipe.py"), 10)


async def test_names_that_are_not_utf8_are_shown_escaped(grep: IndexGrep, tmp_path: Path) -> None:
    bytes_name(tmp_path, b"caf\xe9.txt", b"TODO\n")
    (tmp_path / "d\udcff").mkdir()
    bytes_name(tmp_path / "d\udcff", b"x.py", b"TODO\n")
    ctx = context(tmp_path)
    assert (await call(grep, ctx, pattern="TODO")).splitlines() == [
        "caf\\xe9.txt:1: TODO",
        "d\\xff/x.py:1: TODO",
    ]
    assert await call(grep, ctx, pattern="TODO", path="d\\xff") == "d\\xff/x.py:1: TODO"
    assert await call(grep, ctx, pattern="TODO", glob="caf\\xe9*") == "caf\\xe9.txt:1: TODO"


@pytest.mark.parametrize("pattern", ["a\udce9", "\ud800", "caf\xe9 \udfff"])
async def test_a_pattern_with_a_lone_surrogate_is_refused(
    grep: IndexGrep, tmp_path: Path, pattern: str
) -> None:
    with pytest.raises(ToolError, match=r"invalid regex: it holds a lone surrogate"):
        await call(grep, context(tmp_path), pattern=pattern)
    assert await call(grep, context(tmp_path), pattern="caf\xe9") == "no matches for 'caf\xe9' in ."


# --- found by the tool-argument fuzz (tests/reliability/tool_fuzz.py) ---


async def test_a_glob_with_nul_is_an_invalid_glob(grep: IndexGrep, tree: Path) -> None:
    """Seed 20261201: {"pattern": "a", "glob": "\\u0000"} answered `failed unexpectedly:
    ExceptionGroup(... ValueError('embedded null byte'))`: the glob went to ripgrep's argv."""
    with pytest.raises(ToolError, match=r"invalid glob '\\x00': it holds NUL"):
        await call(grep, context(tree), pattern="a", glob="\x00")


async def test_a_pattern_with_nul_is_searched_not_handed_to_ripgrep(tmp_path: Path) -> None:
    """A NUL cannot stand in an argument: such a pattern is searched with RE2 here, and
    finds what it matches (a text file holds no NUL)."""
    write(tmp_path, "a.txt", "a\n")
    ctx = context(tmp_path, Buffers({tmp_path / "b.txt": "x\x00y\n"}))
    assert await call(RG, ctx, pattern="a\x00") == "no matches for 'a\\x00' in ."
    assert await call(RG, ctx, pattern="x\x00y") == "b.txt:1: x\x00y"


async def test_a_long_pattern_or_glob_is_quoted_by_its_head_and_tail(
    grep: IndexGrep, tree: Path
) -> None:
    long = "head" + "x" * 10_000 + "tail"
    ctx = context(tree)
    for said in (
        summary(grep, ctx, pattern=long, glob=long),
        await call(grep, ctx, pattern=long),
        await call(grep, ctx, pattern="TODO", glob=long),
    ):
        assert len(said) < 1000 and "head" in said and "tail" in said, said
    with pytest.raises(ToolError, match=r"invalid regex") as refused:
        await call(PYTHON, ctx, pattern="(" + long)
    assert len(str(refused.value)) < 1000
