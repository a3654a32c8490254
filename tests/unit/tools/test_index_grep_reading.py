"""How index-grep reads ripgrep's output: no more of it than the answer needs."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from tests.unit.tools import call, context, followed_index, init_repo, write
from tether.errors import ToolError
from tether.tools import candidates, ripgrep_events
from tether.tools.index_grep import IndexGrep
from tether.tools.ripgrep import find_rg


def recording_rg(tmp_path: Path) -> tuple[IndexGrep, Path]:
    """index-grep with a ripgrep that appends its arguments (one a line) to a file first."""
    rg, log = find_rg(), tmp_path / "rg.args"
    assert rg is not None
    script = f'#!/bin/sh\nfor a in "$@"; do printf \'%s\\n\' "$a" >> {log}; done\nexec {rg} "$@"\n'
    wrapper = write(tmp_path, "rg", script)
    wrapper.chmod(0o755)
    return IndexGrep(rg=lambda: str(wrapper)), log


@pytest.mark.skipif(sys.platform == "win32", reason="the recording ripgrep is a shell script")
async def test_a_file_the_glob_leaves_out_is_not_handed_to_ripgrep(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "big.log", "a line of a log\n" * 20_000)  # "$" matches every line
    grep, log = recording_rg(tmp_path)
    out = await call(grep, context(ws), pattern="$", path="big.log", glob="*.py")
    assert out == "no matches for '$' in big.log (files matching *.py)"
    assert "big.log" not in log.read_text().splitlines()
    # A pattern ripgrep refuses is refused all the same.
    with pytest.raises(ToolError, match="invalid regex"):
        await call(grep, context(ws), pattern="(?<=a)b", path="big.log", glob="*.py")


class CountingEvents:
    """ripgrep_events' reading of one event, counting the events it decodes."""

    def __init__(self) -> None:
        self.decoded = 0
        self._event = ripgrep_events._event

    def __call__(self, raw: bytes) -> Any:
        self.decoded += 1
        return self._event(raw)


async def test_past_max_results_the_files_are_counted_unread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for n in range(30):
        write(tmp_path, f"f{n:02}.txt", "hit\n")
    counting = CountingEvents()
    monkeypatch.setattr(ripgrep_events, "_event", counting)
    out = await call(IndexGrep(), context(tmp_path), pattern="hit", max_results=5)
    assert out.splitlines() == [
        *(f"f{n:02}.txt:1: hit" for n in range(5)),
        "[25 more matching lines not shown; narrow with path or glob, or raise max_results]",
    ]
    # Five files' "begin" and "match" events and the summary: not the 25 files past them.
    assert counting.decoded == 11


async def test_past_max_results_only_the_files_the_glob_keeps_are_counted(tmp_path: Path) -> None:
    for n in range(6):
        write(tmp_path, f"src/s{n}.txt", "hit\n")
        write(tmp_path, f"other/o{n}.txt", "hit\nhit\n")
    out = await call(IndexGrep(), context(tmp_path), pattern="hit", glob="src/**", max_results=2)
    assert out.splitlines() == [
        "src/s0.txt:1: hit",
        "src/s1.txt:1: hit",
        "[4 more matching lines not shown; narrow with path or glob, or raise max_results]",
    ]


@pytest.mark.parametrize(("count_past", "more"), [(100_000, "29995"), (20_000, "20000+")])
async def test_megabytes_of_matches_past_max_results_are_counted_over_many_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count_past: int, more: str
) -> None:
    """Some 6 MB of events, read in many chunks: every match past the five shown is
    counted, up to the count's end, without decoding an event."""
    write(tmp_path, "a.txt", "hit\n" * 15_000)
    write(tmp_path, "b.txt", "hit\n" * 15_000)
    counting = CountingEvents()
    monkeypatch.setattr(ripgrep_events, "_event", counting)
    monkeypatch.setattr(ripgrep_events, "COUNT_PAST", count_past)
    out = await call(IndexGrep(), context(tmp_path), pattern="hit", max_results=5)
    assert out.splitlines()[-1].startswith(f"[{more} more matching lines not shown")
    assert counting.decoded < 100


@pytest.mark.skipif(sys.platform == "win32", reason="the failing ripgrep is a shell script")
@pytest.mark.parametrize("lines", [3, 15_000])
async def test_a_search_ripgrep_finished_answers_though_a_file_was_unreadable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: int
) -> None:
    """ripgrep exits 2 when a file could not be read, after its summary (whose "type"
    comes after its "data"): the answer is what it found, whether few events came
    before the summary or thousands, over many reads."""
    rg = find_rg()
    assert rg is not None
    failing = write(tmp_path, "rg", f'#!/bin/sh\n{rg} "$@"\nexit 2\n')
    failing.chmod(0o755)
    # Counted to the end: a count that stops kills the shell, not the ripgrep it runs.
    monkeypatch.setattr(ripgrep_events, "COUNT_PAST", 100_000)
    ws = tmp_path / "ws"
    write(ws, "a.txt", "hit\n" * lines)
    out = await call(IndexGrep(rg=lambda: str(failing)), context(ws), pattern="hit", max_results=2)
    assert out.splitlines()[:2] == ["a.txt:1: hit", "a.txt:2: hit"]


@pytest.mark.skipif(sys.platform == "win32", reason="the recording ripgrep is a shell script")
async def test_the_index_candidates_are_counted_and_only_the_first_matches_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Thirty candidates, more than a slice, two matching lines each, five shown: a count
    a file for all thirty, then JSON events for the three files holding the first five
    only. A slice's worth or fewer are read at once."""
    monkeypatch.setattr(candidates, "SLICE_FILES", 10)
    ws = init_repo(tmp_path / "ws").resolve()
    for n in range(30):
        write(ws, f"f{n:02}.txt", "hit\nmiss\nhit\n")
    write(ws, "rare.txt", "seldom\n")
    index = await followed_index(ws, tmp_path)
    rg, log = find_rg(), tmp_path / "rg.runs"
    assert rg is not None
    script = f'#!/bin/sh\nprintf \'%s\\037\' "$@" >> {log}\necho >> {log}\nexec {rg} "$@"\n'
    recording = write(tmp_path, "rg", script)
    recording.chmod(0o755)
    grep = IndexGrep(rg=lambda: str(recording))

    out = await call(grep, replace(context(ws), index=index), pattern="hit", max_results=5)

    assert out.splitlines() == [
        "f00.txt:1: hit",
        "f00.txt:3: hit",
        "f01.txt:1: hit",
        "f01.txt:3: hit",
        "f02.txt:1: hit",
        "[55 more matching lines not shown; narrow with path or glob, or raise max_results]",
    ]
    runs = [line.split("\x1f")[:-1] for line in log.read_text().splitlines()]
    assert [run[run.index("--") + 1 :] for run in runs if "--json" in run] == [
        ["f00.txt", "f01.txt", "f02.txt"]
    ]
    counted = [name for run in runs if "--count" in run for name in run[run.index("--") + 1 :]]
    assert sorted(counted) == [f"f{n:02}.txt" for n in range(30)]

    log.unlink()
    out = await call(grep, replace(context(ws), index=index), pattern="seldom")
    assert out == "rare.txt:1: seldom"
    runs = [line.split("\x1f")[:-1] for line in log.read_text().splitlines()]
    assert [run[run.index("--") + 1 :] for run in runs] == [["rare.txt"]]
    assert "--json" in runs[0]
    await index.close()


@pytest.mark.skipif(sys.platform == "win32", reason="the lossy ripgrep is a shell script")
async def test_a_count_short_of_a_file_is_taken_again_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A count a line lines up with the files only if every file has its line (one that
    could not be read has none): a line short, the counts are taken again with names."""
    monkeypatch.setattr(candidates, "SLICE_FILES", 4)
    ws = init_repo(tmp_path / "ws").resolve()
    for n in range(6):
        write(ws, f"f{n}.txt", "hit\n" * (n + 1))
    index = await followed_index(ws, tmp_path)
    rg, log = find_rg(), tmp_path / "rg.runs"
    assert rg is not None
    script = (
        f"#!/bin/sh\nprintf '%s\\037' \"$@\" >> {log}\necho >> {log}\n"
        f'case "$*" in *--include-zero*) {rg} "$@" | tail -n +2 ;; *) exec {rg} "$@" ;; esac\n'
    )
    lossy = write(tmp_path, "rg", script)
    lossy.chmod(0o755)
    ctx = replace(context(ws), index=index)

    out = await call(IndexGrep(rg=lambda: str(lossy)), ctx, pattern="hit", max_results=2)

    assert out == await call(IndexGrep(), context(ws), pattern="hit", max_results=2)
    assert out.splitlines()[-1].startswith("[19 more matching lines not shown")
    runs = log.read_text().splitlines()
    assert sum("--include-zero" in run for run in runs) == 2  # two slices, each a line short
    assert sum("--with-filename" in run for run in runs) == 2
    await index.close()
