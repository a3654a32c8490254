"""The workspace index's rows: a warm index-grep against ripgrep over everything, the cold
build against one ripgrep pass, fs-find from the index's names against ripgrep's listing,
and the refresh after one file changes.

The tree: this interpreter's whole library directory (the stdlib and its site-packages)
and this environment's site-packages, hard-linked side by side (instant; copied where a
link cannot be made), ``__pycache__`` left out: real sources, no file twice (~34,000
files and ~240 MB of text here, more with the binaries). ``--quick`` measures on the
bench's stdlib workspace alone, and says so.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import sysconfig
import time
from dataclasses import replace
from pathlib import Path

from bench.timing import Row, children_cpu, interleaved, ms, ratio
from tether.config import Settings
from tether.index.workspace import WorkspaceIndex
from tether.tools.base import NoDocuments, ToolContext
from tether.tools.fs_find import FsFind, FsFindParams
from tether.tools.index_grep import _RG_FLAGS, IndexGrep, IndexGrepParams
from tether.tools.ripgrep import find_rg

PATTERNS: list[tuple[str, str, bool]] = [  # what, pattern, case-sensitive
    ("identifier", "HeaderParseError", True),
    ("literal", "def __init__", True),
    ("regex", r"raise \w+Error\(", True),
    ("ignore case", "copyright", False),
]


def big_tree(parent: Path) -> tuple[Path, int, int]:
    """The installed sources under one root; its files and bytes."""
    root = parent / "big"
    sources = {Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])}
    for n, source in enumerate(sorted(sources)):
        shutil.copytree(
            source, root / f"{n}-{source.name}", copy_function=_link, ignore=_skipped, symlinks=True
        )
    files = size = 0
    for here, _, names in os.walk(root):
        files += len(names)
        size += sum(os.lstat(os.path.join(here, name)).st_size for name in names)
    return root.resolve(), files, size


def _link(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _skipped(directory: str, names: list[str]) -> list[str]:
    return [name for name in names if name in (".git", "__pycache__")]


async def rows(workspace: Path, state: Path, quick: bool, reps: int) -> list[Row]:
    rg = find_rg()
    if rg is None:
        return [Row("index", "", "", "", "no rg found: skipped")]
    if quick:
        tree, label = workspace, "the stdlib (--quick)"
    else:
        tree, files, size = await asyncio.to_thread(big_tree, state.parent)
        label = f"{files:,} files, {size / 1e6:,.0f} MB"
    index = WorkspaceIndex(tree, state / "index-bench.sqlite3")
    # The tree in the page cache first, for both: this VM gives its cache back to the host
    # within minutes, and a first pass read from the disk took rg 29 s where the next took 2.
    one_pass = await _rg_once(rg, tree, "zq_no_such_text_zq")
    built, cpu, workers = await _cold_build(index, define=not quick)
    searchable = float(index.last_build["total_s"])  # index-grep answers from it from here
    out = [
        Row(
            f"index build (cold) vs one `rg` pass, {label}",
            ms(searchable),
            ms(one_pass),
            ratio(searchable, one_pass),
            f"{index.last_build['read']:.0f} files read, walk {index.last_build['walk_s']:.1f} s;"
            f" then definitions {built - searchable:.1f} s; CPU for both {cpu:.1f} s in the"
            f" server, {workers:.1f} s in its worker processes",
        )
    ]
    index.follow()
    ctx = ToolContext(tree, NoDocuments(), Settings.load({}, {}).tools)
    warm = replace(ctx, index=index)
    tool = IndexGrep()
    for case in PATTERNS:
        out.append(await _grep_row(rg, warm, ctx, tool, case, reps, label))
    out.append(await _find_row(warm, ctx, reps, label))
    out.append(await _refresh_row(index, tree, reps))
    await index.close()
    return out


async def _cold_build(index: WorkspaceIndex, define: bool) -> tuple[float, float, float]:
    """Its wall time and the CPU time it took in the server and in its workers (a loaded
    machine stretches the first); ``define``: the definitions too (not under --quick: the
    rows need only the trigrams)."""
    start, cpu, workers = time.perf_counter(), time.process_time(), children_cpu()
    await index.build(define=define)
    took = time.perf_counter() - start
    return took, time.process_time() - cpu, children_cpu() - workers


async def _rg_once(rg: str, tree: Path, pattern: str) -> float:
    """One pass of rg over the tree once it is in the page cache: passes until one is no
    more than a fifth faster than the one before (five at most), the faster of the two."""
    last = await _rg(rg, tree, pattern, True)
    for _ in range(4):
        took = await _rg(rg, tree, pattern, True)
        if took >= last * 0.8:
            return min(took, last)
        last = took
    return last


async def _rg(rg: str, tree: Path, pattern: str, case: bool) -> float:
    argv = [rg, *_RG_FLAGS, "--case-sensitive" if case else "--ignore-case"]
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        "--regexp",
        pattern,
        "--",
        ".",
        cwd=tree,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    await proc.communicate()
    return time.perf_counter() - start


async def _grep_row(
    rg: str,
    warm: ToolContext,
    plain: ToolContext,
    tool: IndexGrep,
    case_: tuple[str, str, bool],
    reps: int,
    label: str,
) -> Row:
    what, pattern, case = case_
    params = IndexGrepParams(pattern=pattern, case_sensitive=case)
    same = await tool.run(params, warm) == await tool.run(params, plain)
    narrowed = await warm.index.candidates(pattern, not case)

    async def tether() -> float:
        start = time.perf_counter()
        await tool.run(params, warm)
        return time.perf_counter() - start

    async def direct() -> float:
        return await _rg(rg, plain.workspace, pattern, case)

    mine, theirs = await interleaved(tether, direct, reps)
    files = "not narrowed: rg over all" if narrowed is None else f"{len(narrowed)} candidates"
    note = f"/{pattern}/{'' if case else 'i'}: {files}; same answer as rg path: {same}"
    return Row(
        f"warm index-grep vs `rg`: {what}, {label}", ms(mine), ms(theirs), ratio(mine, theirs), note
    )


async def _find_row(warm: ToolContext, plain: ToolContext, reps: int, label: str) -> Row:
    """fs-find over the whole tree (few matches: every directory is listed), its files
    named by the warm index against the same tool with ripgrep's ``--files``."""
    tool, params = FsFind(), FsFindParams(pattern="*.pyi")
    same = await tool.run(params, warm) == await tool.run(params, plain)

    async def timed(ctx: ToolContext) -> float:
        start = time.perf_counter()
        await tool.run(params, ctx)
        return time.perf_counter() - start

    mine, theirs = await interleaved(lambda: timed(warm), lambda: timed(plain), reps)
    return Row(
        f"fs-find, index warm vs ripgrep's listing, {label}",
        ms(mine),
        ms(theirs),
        ratio(mine, theirs),
        f"{params.pattern}; same answer: {same}",
    )


async def _refresh_row(index: WorkspaceIndex, tree: Path, reps: int) -> Row:
    target = next(path for path in sorted(tree.rglob("*.py")) if path.stat().st_size > 10_000)
    original = target.read_bytes()
    target.unlink()  # a copy of its own: the tree's copies are hard links to one file
    target.write_bytes(original)
    times: list[float] = []
    try:
        for rep in range(reps):
            target.write_bytes(original + f"\n# refreshed {rep}\n".encode())
            start = time.perf_counter()
            index.changed([target])
            await index.refresh()
            times.append(time.perf_counter() - start)
    finally:
        target.write_bytes(original)
    took = statistics.median(times)
    size = f"{len(original) / 1e3:.0f} KB"
    return Row(
        "index refresh after one file changes",
        ms(took),
        "50 ms (goal)",
        ratio(took, 0.05),
        f"{target.name}, {size}",
    )
