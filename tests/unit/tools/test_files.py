from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.tools import Buffers, context, read_only, write
from tether.errors import ToolError
from tether.tools import builtin_tools
from tether.tools.base import Tool
from tether.tools.ignore import excluded, rules_above, walk
from tether.tools.paths import reads_inside
from tether.tools.text import MAX_FILE_BYTES, load_text, split_lines


def names(root: Path, top: Path | None = None, depth: int | None = None) -> list[str]:
    root = root.resolve()
    return [
        e.path.relative_to(root).as_posix() + ("/" if e.is_dir else "")
        for e in walk(root, (top or root).resolve(), depth)
    ]


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


def test_walk_honours_gitignore_at_every_level_without_a_git_repo(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\nbuild/\n/top-only.txt\n")
    write(tmp_path, "a.log", "")
    write(tmp_path, "build/out.js", "")
    write(tmp_path, "top-only.txt", "")
    write(tmp_path, "src/top-only.txt", "")
    write(tmp_path, "src/.gitignore", "!keep.log\ngen/\n")
    write(tmp_path, "src/keep.log", "")
    write(tmp_path, "src/drop.log", "")
    write(tmp_path, "src/gen/x.py", "")
    write(tmp_path, "src/main.py", "")
    assert names(tmp_path) == [
        ".gitignore",
        "src/",
        "src/.gitignore",
        "src/keep.log",
        "src/main.py",
        "src/top-only.txt",
    ]


def test_walk_never_lists_git_and_honours_info_exclude(tmp_path: Path) -> None:
    write(tmp_path, ".git/HEAD", "ref: refs/heads/main\n")
    write(tmp_path, ".git/info/exclude", "secret.txt\n")
    write(tmp_path, "secret.txt", "")
    write(tmp_path, "sub/.git", "gitdir: elsewhere\n")
    write(tmp_path, "sub/a.txt", "")
    assert names(tmp_path) == ["sub/", "sub/a.txt"]


def test_walk_is_sorted_as_a_tree_and_limited_by_depth(tmp_path: Path) -> None:
    for rel in ["b.txt", "a/z.txt", "a/b/c.txt", "a.txt"]:
        write(tmp_path, rel, "")
    assert names(tmp_path) == ["a/", "a/b/", "a/b/c.txt", "a/z.txt", "a.txt", "b.txt"]
    assert names(tmp_path, depth=1) == ["a/", "a.txt", "b.txt"]


def test_walk_applies_the_rules_above_a_subdirectory(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.tmp\nnode_modules/\n")
    write(tmp_path, "src/a.tmp", "")
    write(tmp_path, "src/a.py", "")
    write(tmp_path, "node_modules/pkg/index.js", "")
    assert names(tmp_path, tmp_path / "src") == ["src/a.py"]
    # A directory asked for by name is walked even when it is ignored itself.
    assert names(tmp_path, tmp_path / "node_modules") == [
        "node_modules/pkg/",
        "node_modules/pkg/index.js",
    ]


def test_walk_lists_symlinks_but_does_not_follow_them(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.txt", "")
    ws = tmp_path / "ws"
    write(ws, "a.txt", "")
    (ws / "link").symlink_to(outside)
    entries = list(walk(ws.resolve(), ws.resolve()))
    assert [(e.path.name, e.is_dir, e.is_link) for e in entries] == [
        ("a.txt", False, False),
        ("link", True, True),
    ]


def test_excluded_matches_what_the_walk_leaves_out(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "dist/\n*.gen.py\n")
    root = tmp_path.resolve()
    assert excluded(root, root, root / "dist/a.py")
    assert excluded(root, root, root / "x.gen.py")
    assert excluded(root, root, root / ".git/config")
    assert not excluded(root, root, root / "src/a.py")
    assert not excluded(root, root / "x.gen.py", root / "x.gen.py")  # named explicitly


def test_reads_inside_follows_dotdot_and_symlinks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "")
    write(tmp_path, "secret.txt", "")
    (ws / "escape").symlink_to(tmp_path / "secret.txt")
    ctx = context(ws)
    assert reads_inside(ctx, "a.txt")
    assert reads_inside(ctx, str(ws / "a.txt"))
    assert not reads_inside(ctx, "../secret.txt")
    assert not reads_inside(ctx, "escape")
    assert not reads_inside(ctx, "/etc/passwd")
    assert reads_inside(ctx, "bad\x00path")  # nothing can be read through it


PATH_TOOLS = {"fs-read", "fs-list", "fs-find", "index-grep", "outline", "git-diff"}


def test_builtin_tools_are_the_contracts_tools_in_its_order() -> None:
    assert [tool.name for tool in builtin_tools()] == [
        "fs-read",
        "fs-list",
        "fs-find",
        "index-grep",
        "outline",
        "git-status",
        "git-diff",
        "git-head",
        "command",
        "patch",
    ]


@pytest.mark.parametrize("tool", [t for t in builtin_tools() if t.name in PATH_TOOLS])
@pytest.mark.parametrize("path", ["../outside.py", "escape.py"])
def test_a_path_outside_the_workspace_is_not_read_only(
    tmp_path: Path, tool: Tool, path: str
) -> None:
    ws = tmp_path / "ws"
    write(ws, "inside.py", "")
    write(tmp_path, "outside.py", "")
    (ws / "escape.py").symlink_to(tmp_path / "outside.py")
    ctx = context(ws)
    extra = {"pattern": "x"} if tool.name in {"fs-find", "index-grep"} else {}
    assert read_only(tool, ctx, path="inside.py", **extra)
    assert not read_only(tool, ctx, path=path, **extra)


def test_every_tool_forbids_unknown_arguments_and_describes_its_fields() -> None:
    for tool in builtin_tools():
        schema = tool.params.model_json_schema()
        assert schema.get("additionalProperties") is False, tool.name
        for field, spec in schema.get("properties", {}).items():
            assert spec.get("description"), f"{tool.name}.{field}"


def test_rules_above_a_directory_are_rebased_onto_the_root(tmp_path: Path) -> None:
    write(tmp_path, ".git/info/exclude", "secret\n")
    write(tmp_path, ".gitignore", "*.log\n/top\n")
    write(tmp_path, "a/.gitignore", "# note\ngen/\n!/keep.log\nb/skip\n**/deep\n")
    write(tmp_path, "a/b/c/.gitignore", "inside\n")
    root = tmp_path.resolve()
    assert rules_above(root, root) == []
    assert rules_above(root, root / "a/b/c") == [
        *("secret", "*.log", "/top"),
        *("# note", "gen/", "!/a/keep.log", "/a/b/skip", "/a/**/deep"),
    ]
    write(tmp_path, ".gitignore", "a/\n")
    assert rules_above(root, root / "a/b") == []  # named explicitly, as ripgrep searches it
