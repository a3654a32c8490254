from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.tools import call, context, init_repo, write
from tether.errors import ToolError
from tether.tools.fs_list import MAX_ENTRIES, FsList, FsListParams

LIST = FsList()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in ["README.md", "src/app/main.py", "src/app/deep/x.py", "src/util.py", "a.txt"]:
        write(tmp_path, rel, "")
    return tmp_path


async def test_default_depth_is_two_levels_with_directories_marked(tree: Path) -> None:
    assert (await call(LIST, context(tree))).splitlines() == [
        "README.md",
        "a.txt",
        "src/",
        "src/app/",
        "src/util.py",
    ]


async def test_depth_one_is_direct_children_and_deeper_goes_further(tree: Path) -> None:
    assert (await call(LIST, context(tree), depth=1)).splitlines() == ["README.md", "a.txt", "src/"]
    assert (await call(LIST, context(tree), path="src", depth=5)).splitlines() == [
        "src/app/",
        "src/app/deep/",
        "src/app/deep/x.py",
        "src/app/main.py",
        "src/util.py",
    ]


async def test_gitignored_entries_and_git_are_never_listed(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, ".gitignore", "node_modules/\n*.pyc\n")
    write(repo, "node_modules/x/index.js", "")
    write(repo, "src/a.py", "")
    write(repo, "src/a.pyc", "")
    assert (await call(LIST, context(repo))).splitlines() == [".gitignore", "src/", "src/a.py"]


async def test_symlinks_show_their_target_and_are_not_entered(tmp_path: Path) -> None:
    write(tmp_path, "real/a.txt", "")
    (tmp_path / "alias").symlink_to("real")
    out = await call(LIST, context(tmp_path))
    assert out.splitlines() == ["alias/ -> real", "real/", "real/a.txt"]


async def test_long_listings_are_cut_with_a_note(tmp_path: Path) -> None:
    for n in range(MAX_ENTRIES + 5):
        (tmp_path / f"f{n:05}").touch()
    lines = (await call(LIST, context(tmp_path))).splitlines()
    assert len(lines) == MAX_ENTRIES + 1
    assert lines[-1].startswith(f"[listing cut at {MAX_ENTRIES} entries; list a subdirectory")


async def test_files_missing_paths_and_empty_directories(tree: Path) -> None:
    ctx = context(tree)
    with pytest.raises(ToolError, match=r"README.md is a file, not a directory"):
        await call(LIST, ctx, path="README.md")
    with pytest.raises(ToolError, match=r"no such directory: nope"):
        await call(LIST, ctx, path="nope")
    (tree / "empty").mkdir()
    assert await call(LIST, ctx, path="empty") == "empty is empty (or holds only ignored files)"


def test_summary_and_params(tmp_path: Path) -> None:
    assert LIST.summary(FsListParams(), context(tmp_path)) == "list . (depth 2)"
    assert set(LIST.params.model_json_schema()["properties"]) == {"path", "depth"}
    with pytest.raises(ValueError):
        LIST.params.model_validate({"depth": 0})
