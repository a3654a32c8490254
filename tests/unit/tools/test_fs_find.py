from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.tools import (
    MAZE_DIRS,
    bytes_name,
    call,
    cancel_once_started,
    context,
    fifo,
    gone,
    ignore_maze,
    responsive,
    sleeper,
    write,
)
from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools.fs_find import MAX_MATCHES, FsFind, FsFindParams, Glob

FIND = FsFind()
PYTHON = FsFind(rg=lambda: None)  # the fallback: no ripgrep on this machine


@pytest.fixture(params=["rg", "python"])
def find(request: pytest.FixtureRequest) -> FsFind:
    return FIND if request.param == "rg" else PYTHON


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in [
        "README.md",
        "docs/guide.md",
        "src/app.py",
        "src/pkg/mod.py",
        "src/pkg/view.tsx",
        "src/pkg/view.ts",
        "tests/test_app.py",
        ".git/config",
        "build/gen.py",
    ]:
        write(tmp_path, rel, "")
    write(tmp_path, ".gitignore", "build/\n")
    return tmp_path


@pytest.mark.parametrize(
    ("pattern", "rel", "hit"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "c.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/pkg/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/pkg/deep/a.py", True),
        ("**/*.md", "README.md", True),
        ("src/**", "src/pkg/a.py", True),
        ("*.{ts,tsx}", "x/view.tsx", True),
        ("*.{ts,tsx}", "x/view.js", False),
        ("test_?.py", "t/test_a.py", True),
        ("[!a]*.py", "b.py", True),
        ("[!a]*.py", "a.py", False),
        ("a+b(1).txt", "a+b(1).txt", True),
        ("./src/*.py", "src/a.py", True),
    ],
)
def test_glob_semantics(pattern: str, rel: str, hit: bool) -> None:
    assert Glob(pattern).matches(rel) is hit


SUFFIX_GLOBS = ["*.py", "**/*.py", "*", "**/*", "*.tar.gz", "*py", "**/*.d.ts", "*~"]
NAMES = ["a.py", "x/a.py", "x/y/.py", "py", "x/py", "a.pyc", "x.py/b", "x\nz.py", "a.tar.gz"]
NAMES += ["x/.hidden.py", "", "x/", "a.b~", "x/y.d.ts", "\udcff.py", "d.py/\udcfe"]


@pytest.mark.parametrize("pattern", SUFFIX_GLOBS)
def test_a_suffix_glob_matches_as_its_regex_does(pattern: str) -> None:
    """``*.py`` and ``**/*.py`` are told by the base name's end, not by RE2: the same
    answers as the regex the glob translates to, for every shape of path."""
    glob = Glob(pattern)
    assert glob._suffix is not None
    for rel in NAMES:
        subject = rel if glob.anchored else rel.rpartition("/")[2]
        by_regex = glob._regex.fullmatch(escape_surrogates(subject).encode()) is not None
        assert glob.matches(rel) is by_regex, (pattern, rel)


@pytest.mark.parametrize(
    "pattern", ["*.{py,pyi}", "src/*.py", "*.p?", "*[.]py", "a*.py", "**/x/*.py"]
)
def test_other_globs_go_to_the_regex(pattern: str) -> None:
    assert Glob(pattern)._suffix is None


def test_a_glob_knows_the_name_part_every_match_has() -> None:
    assert Glob("src/**/*.py").name_part() == "*.py"
    assert Glob("*.{ts,tsx}").name_part() == "*.{ts,tsx}"
    assert Glob("src/**").name_part() is None
    assert Glob("{src/a,lib/b}.py").name_part() is None


async def test_a_name_pattern_matches_at_any_depth(find: FsFind, tree: Path) -> None:
    out = await call(find, context(tree), pattern="*.py")
    assert out.splitlines() == ["src/app.py", "src/pkg/mod.py", "tests/test_app.py"]


async def test_a_path_pattern_matches_workspace_relative_paths(find: FsFind, tree: Path) -> None:
    out = await call(find, context(tree), pattern="src/**/*.{ts,tsx}")
    assert out.splitlines() == ["src/pkg/view.ts", "src/pkg/view.tsx"]
    assert await call(find, context(tree), pattern="**/*.md") == "README.md\ndocs/guide.md"


async def test_path_narrows_the_search_and_patterns_may_be_relative_to_it(
    find: FsFind, tree: Path
) -> None:
    ctx = context(tree)
    assert await call(find, ctx, pattern="*.py", path="src/pkg") == "src/pkg/mod.py"
    assert await call(find, ctx, pattern="pkg/*.py", path="src") == "src/pkg/mod.py"


async def test_directories_match_too(find: FsFind, tree: Path) -> None:
    assert await call(find, context(tree), pattern="pkg") == "src/pkg/"


async def test_gitignored_paths_and_git_are_skipped(find: FsFind, tree: Path) -> None:
    ctx = context(tree)
    assert await call(find, ctx, pattern="gen.py") == "no paths match 'gen.py' under ."
    assert await call(find, ctx, pattern="config") == "no paths match 'config' under ."


async def test_many_matches_are_cut_with_a_note(find: FsFind, tmp_path: Path) -> None:
    for n in range(MAX_MATCHES + 3):
        (tmp_path / f"f{n:05}.txt").touch()
    lines = (await call(find, context(tmp_path), pattern="*.txt")).splitlines()
    assert len(lines) == MAX_MATCHES + 1
    assert lines[-1] == f"[stopped after {MAX_MATCHES} matches; narrow the pattern or the path]"


async def test_bad_globs_and_paths_are_errors(find: FsFind, tree: Path) -> None:
    ctx = context(tree)
    with pytest.raises(ToolError, match=r"invalid glob"):
        await call(find, ctx, pattern="*.{py")
    with pytest.raises(ToolError, match=r"README.md is a file, not a directory"):
        await call(find, ctx, pattern="*", path="README.md")
    with pytest.raises(ToolError, match=r"nope does not exist"):
        await call(find, ctx, pattern="*", path="nope")


def test_summary(tmp_path: Path) -> None:
    params = FsFindParams(pattern="*.py", path="src")
    assert FIND.summary(params, context(tmp_path)) == "find *.py in src"


async def test_ripgrep_and_the_fallback_find_the_same_paths(tmp_path: Path) -> None:
    ctx = context(ignore_maze(tmp_path))
    for path in MAZE_DIRS:
        for pattern in ["*", "**", "*.log", "*.txt", "src/**", "deep/*", "gen", "link-*"]:
            expected = await call(PYTHON, ctx, pattern=pattern, path=path)
            assert await call(FIND, ctx, pattern=pattern, path=path) == expected, (path, pattern)
    assert (await call(FIND, ctx, pattern="*.log")).splitlines() == [
        "src/deep/a.log",
        "src/keep.log",
    ]


async def test_cancelling_a_find_kills_ripgrep(tmp_path: Path) -> None:
    rg, pid_file = sleeper(tmp_path / "rg")
    ws = tmp_path / "ws"
    ws.mkdir()
    task = asyncio.ensure_future(call(FsFind(rg=lambda: str(rg)), context(ws), pattern="*"))
    assert gone(await cancel_once_started(task, pid_file))


@pytest.mark.timeout(60)
async def test_a_catastrophic_glob_neither_hangs_nor_holds_the_server(
    find: FsFind, tmp_path: Path
) -> None:
    """Translated to a backtracking regex, this glob takes tens of seconds on a name of 44
    a's (and ages on a longer one: names go to 255), holding the interpreter; RE2 takes
    microseconds."""
    (tmp_path / ("a" * 44)).touch()
    pattern = "a*a*a*a*a*a*a*a*a*a*a*b"
    timed = await responsive(call(find, context(tmp_path), pattern=pattern))
    assert timed.result == f"no paths match {pattern!r} under ."
    assert timed.seconds < 5 and timed.longest_stall < 1, timed


def test_a_glob_never_backtracks() -> None:
    glob = Glob("a*a*a*a*a*a*a*a*a*a*a*b")
    start = time.monotonic()
    assert not glob.matches("x/" + "a" * 44)  # a backtracking engine: tens of seconds
    assert glob.matches("a" * 44 + "b")
    assert time.monotonic() - start < 0.5


async def test_names_that_are_not_utf8_are_found_and_shown_escaped(
    find: FsFind, tmp_path: Path
) -> None:
    bytes_name(tmp_path, b"caf\xe9.txt")
    (tmp_path / "d\udcff").mkdir()
    bytes_name(tmp_path / "d\udcff", b"x.txt")
    ctx = context(tmp_path)
    assert (await call(find, ctx, pattern="*.txt")).splitlines() == [
        "caf\\xe9.txt",
        "d\\xff/x.txt",
    ]
    assert await call(find, ctx, pattern="caf\\xe9*") == "caf\\xe9.txt"
    assert await call(find, ctx, pattern="*", path="d\\xff") == "d\\xff/x.txt"


@pytest.mark.timeout(30)
async def test_a_fifo_named_gitignore_does_not_hang_the_walk(tmp_path: Path) -> None:
    write(tmp_path, "src/a.py", "")
    fifo(tmp_path, "src/.gitignore")
    fifo(tmp_path, ".git/info/exclude")
    out = await asyncio.wait_for(call(PYTHON, context(tmp_path), pattern="*.py"), 10)
    assert out == "src/a.py"


# --- found by the tool-argument fuzz (tests/reliability/tool_fuzz.py) ---


@pytest.mark.timeout(30)
def test_a_glob_longer_than_any_path_is_refused_at_once() -> None:
    """Seed 20261201: {"pattern": "[" * 8_388_559} held the event loop for over six
    minutes: each "[" looked for its "]" to the end of the glob."""
    start = time.monotonic()
    with pytest.raises(ToolError, match=r"it is 8,388,559 characters long") as refused:
        Glob("[" * 8_388_559)
    assert time.monotonic() - start < 1
    assert len(str(refused.value)) < 1000


def test_a_glob_with_nul_is_refused() -> None:
    with pytest.raises(ToolError, match=r"invalid glob '\\x00': it holds NUL, which no path holds"):
        Glob("\x00")


async def test_a_long_pattern_is_quoted_by_its_head_and_tail(find: FsFind, tree: Path) -> None:
    pattern = "head" + "x" * 10_000 + "tail"
    ctx = context(tree)
    for said in (
        FIND.summary(FsFindParams(pattern=pattern), ctx),
        await call(find, ctx, pattern=pattern),
    ):
        assert len(said) < 500 and "head" in said and "tail" in said, said


@settings(max_examples=300, deadline=None)
@given(
    below=st.text(alphabet="ab./é\udce9", min_size=1, max_size=12),
    base=st.sampled_from(["", "src/", "é/"]),
    glob=st.sampled_from(["*.a", "**/*.b", "*a.b", "**/*.", "*é.a", "*"]),
)
def test_a_suffix_glob_told_at_once_finds_what_its_regex_finds(
    below: str, base: str, glob: str
) -> None:
    """A name's end decides `*.py` and `**/*.py` without the regex: the same answer."""
    pattern, regex_only = Glob(glob), Glob(glob)
    regex_only._suffix = None  # the plain reading: every name by the regex
    assert pattern.finds_below(base, below) == regex_only.finds_below(base, below)
