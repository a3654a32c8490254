"""Rows 1 and 2: one reply's reads concurrently vs one at a time; the dispatcher's own cost."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from bench.harness import Harness, NoopParams, NoopTool, Spec
from bench.timing import Row, children_cpu, interleaved, ms, ratio, us
from tether.index.workspace import WorkspaceIndex
from tether.tools.builtin import builtin_tools

READS: list[Spec] = [
    ("index-grep", {"pattern": "def __init__"}),
    ("index-grep", {"pattern": r"^class \w+\(.*Error\)"}),
    ("fs-read", {"path": "_pydecimal.py"}),
    ("fs-read", {"path": "typing.py"}),
    ("outline", {"path": "_pydecimal.py"}),
    ("fs-find", {"pattern": "**/*.py"}),
    ("git-status", {}),
    ("fs-list", {"depth": 3}),
]


def label(spec: Spec) -> str:
    name, args = spec
    return f"{name} {' '.join(str(v) for v in args.values())}".strip()


async def concurrent_vs_serial(
    workspace: Path, state: Path, reps: int, indexed: bool
) -> tuple[Row, list[Row]]:
    """Row 1, and one detail row per call (its time when dispatched alone). ``indexed``:
    beside the workspace's index, built and told of changes, as a person works once it
    has been built; else as while it builds (every search runs ripgrep over everything)."""
    index = None
    if indexed:
        index = WorkspaceIndex(workspace, state / "reads-index.sqlite3")
        await index.build()
        index.follow()
    h = Harness(
        workspace, state / ("reads-indexed" if indexed else "reads"), builtin_tools(), index
    )
    singles: list[list[float]] = [[] for _ in READS]
    singles_cpu: list[list[float]] = [[] for _ in READS]  # where the batch's own CPU goes
    cpu: list[float] = []  # this process's CPU time (all threads) in each concurrent run
    sub: list[float] = []  # and its subprocesses' (ripgrep, git)

    async def together() -> float:
        reply = h.store_reply(READS)
        start, used, used_sub = time.perf_counter(), time.process_time(), children_cpu()
        await h.dispatch(reply)
        cpu.append(time.process_time() - used)
        sub.append(children_cpu() - used_sub)
        return time.perf_counter() - start

    async def one_at_a_time() -> float:
        total = 0.0
        for i, spec in enumerate(READS):
            reply = h.store_reply([spec])
            start, used = time.perf_counter(), time.process_time()
            await h.dispatch(reply)
            took = time.perf_counter() - start
            singles[i].append(took)
            singles_cpu[i].append(time.process_time() - used)
            total += took
        return total

    await together()
    await one_at_a_time()
    h.check_last(2 * len(READS))
    for times in [*singles, *singles_cpu, cpu, sub]:
        times.clear()
    conc, serial = await interleaved(together, one_at_a_time, reps)
    for times in [*singles, *singles_cpu, cpu, sub]:
        del times[0]  # interleaved's own warm-up
    h.check_last(len(READS))
    h.close()
    if index is not None:
        await index.close()
    single = [statistics.median(times) for times in singles]
    slowest = max(range(len(READS)), key=single.__getitem__)
    own_cpu, sub_cpu, cores = statistics.median(cpu), statistics.median(sub), os.cpu_count() or 1
    # No schedule beats the slowest call, our own CPU (one GIL), or all the CPU over the cores.
    floor = max(single[slowest], own_cpu, (own_cpu + sub_cpu) / cores)
    note = (
        f"slowest single {ms(single[slowest])} ({READS[slowest][0]}), sum of singles "
        f"{ms(sum(single))}; concurrent = {conc / single[slowest]:.2f}x slowest; "
        f"tether's own CPU in it {ms(own_cpu)} (one GIL), its subprocesses' {ms(sub_cpu)}, "
        f"on {cores} cores: no schedule could take under {floor / single[slowest]:.2f}x "
        "slowest (outline answers from the tree it kept of the unchanged file)"
    )
    beside = "index warm" if indexed else "no index"
    row = Row(
        f"8 reads in one reply: concurrent vs one at a time, {beside}",
        ms(conc),
        ms(serial),
        ratio(conc, serial),
        note,
    )
    own = [statistics.median(times) for times in singles_cpu]
    details = [
        Row(f"  alone: {label(spec)}", ms(t), "", "", f"tether's own CPU {ms(c)}")
        for spec, t, c in zip(READS, single, own, strict=True)
    ]
    return row, details


async def overhead(workspace: Path, state: Path, reps: int) -> Row:
    """Row 2: 125 replies of 8 no-op calls through Dispatcher + Store vs 1,000 direct runs."""
    tool = NoopTool()
    h = Harness(workspace, state / "noop", [tool])
    replies, width = 125, 8
    calls_n = replies * width
    stored: list[float] = []

    async def dispatched() -> float:
        total = 0.0
        store_time = 0.0
        for r in range(replies):
            start = time.perf_counter()
            reply = h.store_reply([("noop", {"n": r * width + i}) for i in range(width)])
            mid = time.perf_counter()
            await h.dispatch(reply)
            total += time.perf_counter() - mid
            store_time += mid - start
        stored.append(store_time)
        return total

    params = NoopParams(n=1)

    async def direct() -> float:
        start = time.perf_counter()
        for _ in range(calls_n):
            await tool.run(params, h.env.ctx)
        return time.perf_counter() - start

    via, raw = await interleaved(dispatched, direct, reps)
    h.check_last(width)
    h.close()
    per_reply = statistics.median(stored[1:]) / replies  # [0]: the warm-up
    note = (
        f"{replies} replies x {width} calls, SQLite writes included; storing each reply "
        f"first (the loop's job) adds {us(per_reply)} per reply"
    )
    return Row(
        "dispatcher overhead per call (no-op tool)",
        us(via / calls_n),
        us(raw / calls_n),
        ratio(via, raw),
        note,
    )
