"""index-grep narrowed by the workspace index answers exactly as ripgrep over everything:
a differential test on random patterns over a copy of part of the standard library."""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import sqlite3
import sysconfig
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.tools import Buffers, context, followed_index, init_repo, write
from tether.index import names, shards, workers, workspace
from tether.index.workspace import WorkspaceIndex
from tether.tools import candidates, ripgrep_events
from tether.tools.base import ToolContext
from tether.tools.index_grep import IndexGrep, IndexGrepParams
from tether.tools.listing import Listings

STDLIB = Path(sysconfig.get_paths()["stdlib"])
COPIED = ("json", "email", "logging", "http", "html", "urllib", "xml/dom")
GREP = IndexGrep()


@pytest.fixture(scope="module", params=["threads", "workers"])
def indexed(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[tuple[ToolContext, ToolContext]]:
    """The same workspace searched without the index and with it (and one unsaved buffer);
    the index built on the server's threads (FTS5 documents), or as a long pass of worker
    processes (posting lists, a segment of 13 files each: ``postings``)."""
    tmp = tmp_path_factory.mktemp("indexed")
    ws = init_repo(tmp / "ws").resolve()
    for name in COPIED:
        shutil.copytree(STDLIB / name, ws / name, ignore=shutil.ignore_patterns("__pycache__"))
    write(ws, ".gitignore", "*.log\nhtml/entities.py\n")
    write(ws, "email/.gitignore", "!keep.log\n")
    write(ws, "email/keep.log", "class Message kept\n")
    write(ws, "skipped.log", "class Message ignored\n")
    write(ws, "image.bin", b"\x00class Message")
    write(ws, "wide.txt", "\ufeffclass Message wide\n".encode("utf-16"))
    write(ws, "latin.txt", "caf\u00e9 class Message\n".encode("latin-1"))
    write(ws, "folds.txt", "\u212aelvin and \u017felf: Message\n")  # fold to k and s
    buffers = Buffers({ws / "json" / "tool.py": "import json\nclass Message unsaved\n"})
    index = WorkspaceIndex(ws, tmp / "index.sqlite3")
    with pytest.MonkeyPatch.context() as patch:
        if request.param == "workers":
            patch.setattr(workers, "FROM_FILES", 1)
            patch.setattr(workspace, "WORKER_BATCH", 13)
        asyncio.run(index.build())
    if request.param == "workers":  # the pass ran in workers: segments in the shards
        assert _segments(tmp / "index.sqlite3") > 2
    index.follow()
    plain = context(ws, buffers)
    yield plain, replace(plain, index=index)
    asyncio.run(index.close())


def _segments(database: Path) -> int:
    count = 0
    for shard in shards.files(database):
        if shard.name[-1].isdigit():  # not a WAL's files
            with contextlib.closing(sqlite3.connect(shard)) as db:
                count += db.execute("SELECT count(*) FROM postings").fetchone()[0]
    return count


def _words() -> list[str]:
    text = (STDLIB / "email" / "message.py").read_text() + (
        STDLIB / "json" / "decoder.py"
    ).read_text()
    return sorted(set(re.findall(r"[A-Za-z_]{3,12}", text)))[:400]


_PIECES = st.one_of(
    st.sampled_from(_words()),
    st.sampled_from(
        [
            " ",
            ".",
            r"\.",
            r"\w+",
            r"\s*",
            "(",
            ")",
            "|",
            "?",
            "*",
            "+",
            "[a-z]",
            "^",
            "$",
            r"\(",
            "(?i)",
            r"\b",
            "{1,2}",
            "_",
            "def ",
            "self",
            "None",
            r"\x41",
            r"\p{L}",
            "[[:alpha:]]",
            "\u00e9",
            r"\d+",
            "(?:",
            "{0,2}",
            r"\<",
            "K",
            "\u017f",
        ]
    ),
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    pattern=st.lists(_PIECES, min_size=1, max_size=5).map("".join),
    case_sensitive=st.booleans(),
    where=st.sampled_from([".", "email", "xml/dom"]),
    glob=st.sampled_from([None, "*.py", "email/**/*.py"]),
    max_results=st.sampled_from([3, 100]),
    slice_files=st.sampled_from([candidates.SLICE_FILES, 7]),
    count_past=st.sampled_from([ripgrep_events.COUNT_PAST, 5]),
    many=st.sampled_from([names.MANY, 1]),
)
def test_the_index_answers_as_ripgrep_does(
    indexed: tuple[ToolContext, ToolContext],
    pattern: str,
    case_sensitive: bool,
    where: str,
    glob: str | None,
    max_results: int,
    slice_files: int,
    count_past: int,
    many: int,
) -> None:
    """Also with the candidates cut in slices of a few files (searched a few at once, in
    order), a count that stops soon, and the files named by a map from document to file
    (made after any question: ``names.MANY``): the first matches and the count are the
    same."""
    plain, with_index = indexed
    params = IndexGrepParams(
        pattern=pattern,
        case_sensitive=case_sensitive,
        path=where,
        glob=glob,
        max_results=max_results,
    )
    usual = candidates.SLICE_FILES, ripgrep_events.COUNT_PAST, names.MANY
    candidates.SLICE_FILES, ripgrep_events.COUNT_PAST, names.MANY = slice_files, count_past, many
    try:
        assert asyncio.run(_answer(with_index, params)) == asyncio.run(_answer(plain, params))
    finally:
        candidates.SLICE_FILES, ripgrep_events.COUNT_PAST, names.MANY = usual


@pytest.mark.parametrize("count_past", [5, 40, 300, ripgrep_events.COUNT_PAST])
@pytest.mark.parametrize("pattern", ["def ", "Message", r"self\.\w+ = "])
def test_a_common_pattern_searched_slice_by_slice_counts_as_one_search(
    indexed: tuple[ToolContext, ToolContext],
    monkeypatch: pytest.MonkeyPatch,
    pattern: str,
    count_past: int,
) -> None:
    """Hundreds of candidates in slices of 7 files: the count may stop in any slice, or
    in none; the matches shown and the count are one search's."""
    plain, with_index = indexed
    monkeypatch.setattr(candidates, "SLICE_FILES", 7)
    monkeypatch.setattr(ripgrep_events, "COUNT_PAST", count_past)
    params = IndexGrepParams(pattern=pattern, max_results=20)

    answer = asyncio.run(_answer(with_index, params))

    assert answer == asyncio.run(_answer(plain, params))
    assert "more matching lines not shown" in answer


async def _answer(ctx: ToolContext, params: IndexGrepParams) -> str:
    try:
        return await GREP.run(params, ctx)
    except Exception as exc:  # an error must be the same error too
        return f"{type(exc).__name__}: {exc}"
    finally:
        if (naming := getattr(ctx.index, "_naming", None)) is not None:
            await naming  # the map of the names, made in this loop, not beside the next


async def test_the_index_narrows_what_ripgrep_reads(
    indexed: tuple[ToolContext, ToolContext],
) -> None:
    _, with_index = indexed
    found = await with_index.index.candidates("HeaderParseError", ignore_case=False)
    assert found is not None and 0 < len(found) < 15


@pytest.mark.parametrize(
    ("pattern", "case_sensitive"), [("kelvin and", False), ("(?i)self: mess", True)]
)
async def test_letters_that_fold_beyond_ascii_are_found_as_ripgrep_finds_them(
    indexed: tuple[ToolContext, ToolContext], pattern: str, case_sensitive: bool
) -> None:
    plain, with_index = indexed
    params = IndexGrepParams(pattern=pattern, case_sensitive=case_sensitive)
    answer = await GREP.run(params, plain)
    assert "folds.txt:1:" in answer
    assert await GREP.run(params, with_index) == answer


async def test_a_directory_swapped_for_a_link_is_not_read_through(tmp_path: Path) -> None:
    ws = init_repo(tmp_path / "ws").resolve()
    write(ws, "sub/b.py", "inside_marker = 1\n")
    outside = tmp_path / "outside"
    write(outside, "b.py", "inside_marker = 'a secret outside the workspace'\n")
    index = await followed_index(ws, tmp_path)
    shutil.rmtree(ws / "sub")
    (ws / "sub").symlink_to(outside)  # before any watcher could tell the index
    params = IndexGrepParams(pattern="inside_marker")
    answer = await GREP.run(params, replace(context(ws), index=index))
    assert "secret" not in answer
    await index.close()


@pytest.mark.parametrize(
    ("trusted", "order"),
    [(True, ["ripgrep", "the next call"]), (False, ["the next call", "ripgrep"])],
)
async def test_a_narrowed_search_starts_its_ripgrep_before_the_next_call_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trusted: bool, order: list[str]
) -> None:
    """The calls of a reply start in order, each running until it first waits. A
    search's question to a small index, its candidates' judging and its ripgrep's start
    all come in its first step: a hop to a thread or a task of its own put them after
    every other call's first step (its ripgrep started 20 ms into a reply of 8 reads).
    Where no directory's listing is kept (Windows), each file is judged by an ``lstat``
    of its own, in a thread."""
    monkeypatch.setattr(Listings, "TRUSTED", trusted)
    ws = init_repo(tmp_path / "ws").resolve()
    write(ws, "a.py", "alpha_marker = 1\n")
    write(ws, "sub/b.py", "beta_marker = 2\n")
    index = await followed_index(ws, tmp_path)
    started: list[str] = []
    spawn = asyncio.create_subprocess_exec

    async def spawned(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        started.append("ripgrep")
        return await spawn(*args, **kwargs)

    async def next_call() -> None:
        started.append("the next call")

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spawned)
    params = IndexGrepParams(pattern="alpha_marker")
    search = asyncio.ensure_future(GREP.run(params, replace(context(ws), index=index)))
    following = asyncio.ensure_future(next_call())
    answer = await search
    await following
    assert "a.py:1:" in answer and "b.py" not in answer
    assert started == order
    await index.close()
