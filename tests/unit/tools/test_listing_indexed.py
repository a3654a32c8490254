"""fs-find answers from the workspace index's names exactly as from ripgrep's listing:
a differential test on random globs over a copy of part of the standard library with
the entries a listing must get right (links, empty and ignored directories, odd names)."""

from __future__ import annotations

import asyncio
import os
import shutil
import sysconfig
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.tools import call, context, followed_index, init_repo, write
from tether.index.workspace import WorkspaceIndex
from tether.tools import listing
from tether.tools.base import ToolContext
from tether.tools.fs_find import FsFind, FsFindParams
from tether.tools.fs_list import FsList

STDLIB = Path(sysconfig.get_paths()["stdlib"])
COPIED = ("json", "email", "logging", "xml/dom")
FIND = FsFind()


def _tree(ws: Path) -> None:
    for name in COPIED:
        shutil.copytree(STDLIB / name, ws / name, ignore=shutil.ignore_patterns("__pycache__"))
    write(ws, ".gitignore", "*.log\nbuild/\nemail/mime/\n")
    write(ws, "email/.gitignore", "!keep.log\n")
    write(ws, "email/keep.log", "kept\n")
    write(ws, "skipped.log", "ignored\n")
    write(ws, "build/out.py", "ignored\n")
    write(ws, "only_ignored/x.log", "ignored\n")
    (ws / "empty" / "deeper").mkdir(parents=True)
    (ws / "json" / "link.py").symlink_to("decoder.py")
    (ws / "dom_link").symlink_to("xml/dom", target_is_directory=True)
    (ws / os.fsdecode(b"caf\xe9.py")).write_text("odd name\n")
    write(ws, "image.bin", b"\x00\x01")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ToolContext, ToolContext]]:
    """The same workspace listed without the index and with it."""
    tmp = tmp_path_factory.mktemp("listed")
    ws = init_repo(tmp / "ws").resolve()
    _tree(ws)
    index = WorkspaceIndex(ws, tmp / "index.sqlite3")
    asyncio.run(index.build())
    index.follow()
    plain = context(ws)
    yield plain, replace(plain, index=index)
    asyncio.run(index.close())


_SEGMENTS = st.sampled_from(
    ["*", "**", "*.py", "*.log", "?", "[a-m]*", "{json,email}", "email", "dom", "mime", "x*"]
)


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pattern=st.lists(_SEGMENTS, min_size=1, max_size=3).map("/".join),
    where=st.sampled_from([".", "email", "xml", "empty", "only_ignored"]),
)
def test_the_index_names_the_files_as_ripgrep_does(
    indexed: tuple[ToolContext, ToolContext], pattern: str, where: str
) -> None:
    plain, with_index = indexed
    params = FsFindParams(pattern=pattern, path=where)
    assert asyncio.run(_answer(with_index, params)) == asyncio.run(_answer(plain, params))


async def _answer(ctx: ToolContext, params: FsFindParams) -> str:
    try:
        return await FIND.run(params, ctx)
    except Exception as exc:  # an error must be the same error too
        return f"{type(exc).__name__}: {exc}"


async def test_a_warm_index_spares_ripgrep_its_walk(
    indexed: tuple[ToolContext, ToolContext], monkeypatch: pytest.MonkeyPatch
) -> None:
    plain, with_index = indexed
    expected = await call(FIND, plain, pattern="**")
    assert "dom_link" in expected and "empty/deeper/" in expected

    async def no_ripgrep(*args: object) -> None:
        raise AssertionError("ripgrep listed the files the index holds")

    monkeypatch.setattr(listing, "_rg_files", no_ripgrep)
    assert await call(FIND, with_index, pattern="**") == expected


@pytest.mark.parametrize("where", [".", "email", "xml", "empty", "only_ignored", "dom_link"])
async def test_a_listing_at_any_depth_is_the_same_from_the_index(
    indexed: tuple[ToolContext, ToolContext], monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """The index's names, kept from call to call, serve a listing cut at a depth too
    (``rg --max-depth`` need not run): the walk still never descends past the depth."""
    plain, with_index = indexed
    expected = {depth: await _listed(plain, where, depth) for depth in (1, 2, 5)}
    if where == ".":
        assert "xml/dom/" in expected[2].splitlines() and "xml/dom/" not in expected[1]

    async def no_ripgrep(*args: object) -> None:
        raise AssertionError("ripgrep listed the files the index holds")

    monkeypatch.setattr(listing, "_rg_files", no_ripgrep)
    for depth, answer in expected.items():
        assert await _listed(with_index, where, depth) == answer


async def _listed(ctx: ToolContext, where: str, depth: int) -> str:
    try:
        return await call(FsList(), ctx, path=where, depth=depth)
    except Exception as exc:  # an error must be the same error too
        return f"{type(exc).__name__}: {exc}"


async def test_changes_told_are_listed_at_once(tmp_path: Path) -> None:
    ws = init_repo(tmp_path / "ws").resolve()
    write(ws, "a.py", "a\n")
    write(ws, "sub/b.py", "b\n")
    index = await followed_index(ws, tmp_path)
    plain, with_index = context(ws), replace(context(ws), index=index)
    write(ws, "new/c.py", "c\n")
    (ws / "a.py").unlink()
    write(ws, ".gitignore", "sub/\n")
    index.changed([ws / "new" / "c.py", ws / "a.py", ws / ".gitignore"])
    await index.settled()  # an ignore file changed: the workspace is walked again

    answer = await call(FIND, with_index, pattern="**/*.py")

    assert answer == await call(FIND, plain, pattern="**/*.py") == "new/c.py"
    await index.close()


async def test_a_directory_swapped_for_a_link_is_not_entered(tmp_path: Path) -> None:
    """Before any watcher could tell the index: its names still say ``sub/`` holds kept
    files, but what is there now is a link, shown as one and never followed."""
    ws = init_repo(tmp_path / "ws").resolve()
    write(ws, "sub/b.py", "b\n")
    write(tmp_path / "outside", "secret.py", "a secret outside the workspace\n")
    index = await followed_index(ws, tmp_path)
    shutil.rmtree(ws / "sub")
    (ws / "sub").symlink_to(tmp_path / "outside", target_is_directory=True)

    answer = await call(FIND, replace(context(ws), index=index), pattern="**")

    assert answer == "sub/"
    await index.close()
