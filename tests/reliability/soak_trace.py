"""The soak campaign's debug run: what the server's memory grows by, from tracemalloc.

``SOAK_TRACEMALLOC=DIR python -m tests.reliability soak --long`` starts the server with
``tracing/`` on its ``PYTHONPATH`` (its ``sitecustomize`` traces every allocation) and
takes a snapshot at each of the campaign's readings (every 100 turns, at rest). At the
end the first snapshot is compared with the last: the lines that allocated the most
since are written to ``DIR/growth.txt``, with the tracebacks of the largest, and the
traced totals become figures, with the first and last lines of ``DIR/memory.tsv`` (what
the resident set is made of; ``tracing/sitecustomize.py``) and the kinds of object the
collector tracks that grew most (``DIR/objects-NNN.tsv``). Tracing slows the server
several times over, so a traced run's overhead figures are not comparable with an
untraced run's; ``SOAK_TRACEMALLOC_FRAMES=0`` reads the table alone, untraced.
"""

from __future__ import annotations

import asyncio
import os
import signal
import tracemalloc
from collections import Counter
from pathlib import Path

SITE = Path(__file__).parent / "tracing"
WAIT_S = 120.0  # a snapshot of a server of ~100 MiB takes seconds, on a busy machine more
LINES = 25  # the lines shown, by growth
TRACEBACKS = 6  # the tracebacks shown, by growth


def directory() -> Path | None:
    where = os.environ.get("SOAK_TRACEMALLOC")
    return Path(where).resolve() if where else None


def server_environment(where: Path) -> dict[str, str]:
    paths = [str(SITE), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {"PYTHONPATH": os.pathsep.join(paths), "SOAK_TRACEMALLOC": str(where)}


async def snapshot(pid: int, where: Path) -> None:
    """Ask the server for a snapshot and wait until it is written whole."""
    before = len(list(where.glob("snapshot-*.pickle")))
    os.kill(pid, signal.SIGUSR1)  # Linux only: the soak reads /proc, and elsewhere skips it
    deadline = asyncio.get_running_loop().time() + WAIT_S
    while len(list(where.glob("snapshot-*.pickle"))) == before:
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"the server wrote no snapshot in {WAIT_S:.0f} s")
        await asyncio.sleep(0.2)


def growth(where: Path) -> dict[str, str]:
    """The memory table's first and last lines; and, where traced, the first snapshot
    compared with the last (the details written to ``growth.txt``)."""
    figures: dict[str, str] = {}
    table = where / "memory.tsv"
    rows = [line.split("\t") for line in table.read_text().splitlines()] if table.exists() else []
    if len(rows) > 2:
        for column, before, after in list(zip(rows[0], rows[1], rows[-1], strict=True))[1:]:
            if before == "-1":
                continue  # not told on this system, or not traced
            if column.endswith("_kib"):
                before, after = (f"{int(kib) / 1024:.1f}" for kib in (before, after))
            figures[column.replace("_kib", " MiB")] = f"{before} -> {after}"
    objects = sorted(where.glob("objects-*.tsv"))
    if len(objects) > 1:
        first_kinds, last_kinds = (_kinds(p) for p in (objects[0], objects[-1]))
        tracked = (sum(kinds.values()) for kinds in (first_kinds, last_kinds))
        figures["objects the collector tracks"] = " -> ".join(map(str, tracked))
        grew = sorted(
            last_kinds.keys() | first_kinds.keys(), key=lambda k: first_kinds[k] - last_kinds[k]
        )
        figures["kinds that grew most"] = ", ".join(
            f"{k} {last_kinds[k] - first_kinds[k]:+}" for k in grew[:5]
        )
    taken = sorted(p for p in where.glob("snapshot-*.pickle") if p.stat().st_size)
    if len(taken) < 2:
        return figures
    ignored = [
        tracemalloc.Filter(False, tracemalloc.__file__),
        tracemalloc.Filter(False, "<frozen importlib._bootstrap*>"),
        tracemalloc.Filter(False, str(SITE / "*")),
    ]
    first, last = (
        tracemalloc.Snapshot.load(str(p)).filter_traces(ignored) for p in (taken[0], taken[-1])
    )
    lines = last.compare_to(first, "lineno")
    traces = last.compare_to(first, "traceback")
    report = [f"{taken[0].name} -> {taken[-1].name}: the lines that grew most", ""]
    report += [str(stat) for stat in lines[:LINES]]
    for stat in traces[:TRACEBACKS]:
        report += ["", f"{stat.size_diff / 1024:+.1f} KiB in {stat.count_diff:+} blocks:"]
        report += stat.traceback.format()
    (where / "growth.txt").write_text("\n".join(report) + "\n")
    total = [sum(s.size for s in snap.statistics("filename")) / 2**20 for snap in (first, last)]
    return figures | {
        "traced MiB, first / last snapshot": f"{total[0]:.1f} / {total[1]:.1f}",
        "grew most": str(lines[0]) if lines else "",
        "details": str(where / "growth.txt"),
    }


def _kinds(path: Path) -> Counter[str]:
    """An ``objects-NNN.tsv``: how many objects of each type the collector tracked."""
    kinds: Counter[str] = Counter()
    for line in path.read_text().splitlines():
        count, _, kind = line.partition("\t")
        kinds[kind] = int(count)
    return kinds
