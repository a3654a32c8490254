from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.tools import call, context, write
from tether.errors import ToolError
from tether.tools.fs_find import MAX_MATCHES, FsFind, FsFindParams, Glob

FIND = FsFind()


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


def test_a_glob_knows_the_name_part_every_match_has() -> None:
    assert Glob("src/**/*.py").name_part() == "*.py"
    assert Glob("*.{ts,tsx}").name_part() == "*.{ts,tsx}"
    assert Glob("src/**").name_part() is None
    assert Glob("{src/a,lib/b}.py").name_part() is None


async def test_a_name_pattern_matches_at_any_depth(tree: Path) -> None:
    out = await call(FIND, context(tree), pattern="*.py")
    assert out.splitlines() == ["src/app.py", "src/pkg/mod.py", "tests/test_app.py"]


async def test_a_path_pattern_matches_workspace_relative_paths(tree: Path) -> None:
    out = await call(FIND, context(tree), pattern="src/**/*.{ts,tsx}")
    assert out.splitlines() == ["src/pkg/view.ts", "src/pkg/view.tsx"]
    assert await call(FIND, context(tree), pattern="**/*.md") == "README.md\ndocs/guide.md"


async def test_path_narrows_the_search_and_patterns_may_be_relative_to_it(tree: Path) -> None:
    ctx = context(tree)
    assert await call(FIND, ctx, pattern="*.py", path="src/pkg") == "src/pkg/mod.py"
    assert await call(FIND, ctx, pattern="pkg/*.py", path="src") == "src/pkg/mod.py"


async def test_directories_match_too(tree: Path) -> None:
    assert await call(FIND, context(tree), pattern="pkg") == "src/pkg/"


async def test_gitignored_paths_and_git_are_skipped(tree: Path) -> None:
    ctx = context(tree)
    assert "build/gen.py" not in await call(FIND, ctx, pattern="*.py")
    assert await call(FIND, ctx, pattern="config") == "no paths match 'config' under ."


async def test_many_matches_are_cut_with_a_note(tmp_path: Path) -> None:
    for n in range(MAX_MATCHES + 3):
        (tmp_path / f"f{n:05}.txt").touch()
    lines = (await call(FIND, context(tmp_path), pattern="*.txt")).splitlines()
    assert len(lines) == MAX_MATCHES + 1
    assert lines[-1] == f"[stopped after {MAX_MATCHES} matches; narrow the pattern or the path]"


async def test_bad_globs_and_paths_are_errors(tree: Path) -> None:
    ctx = context(tree)
    with pytest.raises(ToolError, match=r"invalid glob"):
        await call(FIND, ctx, pattern="*.{py")
    with pytest.raises(ToolError, match=r"README.md is a file, not a directory"):
        await call(FIND, ctx, pattern="*", path="README.md")
    with pytest.raises(ToolError, match=r"nope does not exist"):
        await call(FIND, ctx, pattern="*", path="nope")


def test_summary(tmp_path: Path) -> None:
    params = FsFindParams(pattern="*.py", path="src")
    assert FIND.summary(params, context(tmp_path)) == "find *.py in src"
