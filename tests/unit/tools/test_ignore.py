"""Which files belong to the workspace (``tether.tools.ignore``): the .gitignore engine and
the walk built on it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.tools import bytes_name, write
from tether.tools.ignore import excluded, rules_above, walk


def names(root: Path, top: Path | None = None, depth: int | None = None) -> list[str]:
    root = root.resolve()
    return [
        e.path.relative_to(root).as_posix() + ("/" if e.is_dir else "")
        for e in walk(root, (top or root).resolve(), depth)
    ]


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


def test_names_that_are_not_utf8_are_judged_by_the_rules(tmp_path: Path) -> None:
    # Found by tool-fuzz: the rules' regex engine (RE2) takes UTF-8 only, and a name that
    # is not UTF-8 under any .gitignore crashed the walk (UnicodeEncodeError).
    write(tmp_path, ".gitignore", "*.log\nskip-?.txt\n")
    bytes_name(tmp_path, b"caf\xe9.txt")
    bytes_name(tmp_path, b"caf\xe9.log")
    bytes_name(tmp_path, b"skip-\xe9.txt")
    assert names(tmp_path) == [".gitignore", "caf\udce9.txt"]


def test_an_ignore_file_named_in_another_case_counts_where_the_filesystem_ignores_case(
    tmp_path: Path,
) -> None:
    """On macOS and Windows, git and ripgrep open ".gitignore" and get ".GITIGNORE": the walk,
    which reads a directory's ignore file only when its listing holds one, must see it too."""
    write(tmp_path, "probe", "")
    if not (tmp_path / "PROBE").exists():
        pytest.skip("this filesystem tells names apart by case (Linux): no such file to read")
    write(tmp_path, "sub/.GITIGNORE", "*.log\n")
    write(tmp_path, "sub/a.log", "")
    write(tmp_path, "sub/a.py", "")
    assert "sub/a.py" in names(tmp_path) and "sub/a.log" not in names(tmp_path)
