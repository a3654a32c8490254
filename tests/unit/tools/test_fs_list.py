from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.unit.tools import (
    MAZE_DIRS,
    bytes_name,
    call,
    cancel_once_started,
    context,
    fifo,
    gone,
    ignore_maze,
    init_repo,
    sleeper,
    write,
)
from tether.errors import ToolError
from tether.tools.fs_list import MAX_ENTRIES, FsList, FsListParams

LIST = FsList()
PYTHON = FsList(rg=lambda: None)  # the fallback: no ripgrep on this machine


@pytest.fixture(params=["rg", "python"])
def lister(request: pytest.FixtureRequest) -> FsList:
    return LIST if request.param == "rg" else PYTHON


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    for rel in ["README.md", "src/app/main.py", "src/app/deep/x.py", "src/util.py", "a.txt"]:
        write(tmp_path, rel, "")
    return tmp_path


async def test_default_depth_is_two_levels_with_directories_marked(
    lister: FsList, tree: Path
) -> None:
    assert (await call(lister, context(tree))).splitlines() == [
        "README.md",
        "a.txt",
        "src/",
        "src/app/",
        "src/util.py",
    ]


async def test_depth_one_is_direct_children_and_deeper_goes_further(
    lister: FsList, tree: Path
) -> None:
    assert (await call(lister, context(tree), depth=1)).splitlines() == [
        "README.md",
        "a.txt",
        "src/",
    ]
    assert (await call(lister, context(tree), path="src", depth=5)).splitlines() == [
        "src/app/",
        "src/app/deep/",
        "src/app/deep/x.py",
        "src/app/main.py",
        "src/util.py",
    ]


async def test_gitignored_entries_and_git_are_never_listed(lister: FsList, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, ".gitignore", "node_modules/\n*.pyc\n")
    write(repo, "node_modules/x/index.js", "")
    write(repo, "src/a.py", "")
    write(repo, "src/a.pyc", "")
    assert (await call(lister, context(repo))).splitlines() == [".gitignore", "src/", "src/a.py"]


async def test_symlinks_show_their_target_and_are_not_entered(
    lister: FsList, tmp_path: Path
) -> None:
    write(tmp_path, "real/a.txt", "")
    (tmp_path / "alias").symlink_to("real")
    out = await call(lister, context(tmp_path))
    assert out.splitlines() == ["alias/ -> real", "real/", "real/a.txt"]


async def test_long_listings_are_cut_with_a_note(lister: FsList, tmp_path: Path) -> None:
    for n in range(MAX_ENTRIES + 5):
        (tmp_path / f"f{n:05}").touch()
    lines = (await call(lister, context(tmp_path))).splitlines()
    assert len(lines) == MAX_ENTRIES + 1
    assert lines[-1].startswith(f"[listing cut at {MAX_ENTRIES} entries; list a subdirectory")


async def test_files_missing_paths_and_empty_directories(lister: FsList, tree: Path) -> None:
    ctx = context(tree)
    with pytest.raises(ToolError, match=r"README.md is a file, not a directory"):
        await call(lister, ctx, path="README.md")
    with pytest.raises(ToolError, match=r"no such directory: nope"):
        await call(lister, ctx, path="nope")
    (tree / "empty").mkdir()
    assert await call(lister, ctx, path="empty") == "empty is empty (or holds only ignored files)"


def test_summary_and_params(tmp_path: Path) -> None:
    assert LIST.summary(FsListParams(), context(tmp_path)) == "list . (depth 2)"
    assert set(LIST.params.model_json_schema()["properties"]) == {"path", "depth"}
    with pytest.raises(ValueError):
        LIST.params.model_validate({"depth": 0})


async def test_ripgrep_and_the_fallback_list_the_same_entries(tmp_path: Path) -> None:
    ctx = context(ignore_maze(tmp_path))
    for path in MAZE_DIRS:
        for depth in (1, 2, 3, 10):
            expected = await call(PYTHON, ctx, path=path, depth=depth)
            assert await call(LIST, ctx, path=path, depth=depth) == expected, (path, depth)
    assert (await call(LIST, ctx, path="src", depth=1)).splitlines() == [
        "src/.gitignore",
        "src/deep/",
        "src/keep.log",
        "src/main.py",
        "src/top-only.txt",
        "src/up/ -> ..",
    ]


async def test_cancelling_a_listing_kills_ripgrep(tmp_path: Path) -> None:
    rg, pid_file = sleeper(tmp_path / "rg")
    ws = tmp_path / "ws"
    ws.mkdir()
    task = asyncio.ensure_future(call(FsList(rg=lambda: str(rg)), context(ws)))
    assert gone(await cancel_once_started(task, pid_file))


async def test_names_that_are_not_utf8_are_listed_escaped(lister: FsList, tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    bytes_name(repo, b"caf\xe9.txt")
    (repo / "d\udcff").mkdir()
    bytes_name(repo / "d\udcff", b"x\xfe.txt")
    (repo / "l\udce9").symlink_to("caf\udce9.txt")
    ctx = context(repo)
    assert (await call(lister, ctx)).splitlines() == [
        "caf\\xe9.txt",
        "d\\xff/",
        "d\\xff/x\\xfe.txt",
        "l\\xe9 -> caf\\xe9.txt",
    ]
    assert await call(lister, ctx, path="d\\xff") == "d\\xff/x\\xfe.txt"


@pytest.mark.timeout(30)
async def test_fifos_are_listed_not_read(lister: FsList, tmp_path: Path) -> None:
    fifo(tmp_path, "pipe")
    write(tmp_path, "a.txt", "")
    out = await asyncio.wait_for(call(lister, context(tmp_path)), 10)
    assert out.splitlines() == ["a.txt", "pipe"]


@pytest.mark.timeout(30)
async def test_a_fifo_named_gitignore_does_not_hang_the_walk(tmp_path: Path) -> None:
    write(tmp_path, "src/a.py", "")
    fifo(tmp_path, "src/.gitignore")
    out = await asyncio.wait_for(call(PYTHON, context(tmp_path)), 10)
    assert out.splitlines() == ["src/", "src/.gitignore", "src/a.py"]
