"""Measuring: interleaved A/B repetitions, medians, and the one Markdown table."""

from __future__ import annotations

import os
import statistics
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

Measure = Callable[[], Awaitable[float]]  # one repetition; returns the seconds it measured


@dataclass(frozen=True)
class Row:
    what: str
    tether: str
    baseline: str
    ratio: str
    note: str


async def interleaved(a: Measure, b: Measure, reps: int) -> tuple[float, float]:
    """Warm both up once, then alternate which goes first; the medians of A and B."""
    await a()
    await b()
    times_a: list[float] = []
    times_b: list[float] = []
    for rep in range(reps):
        if rep % 2 == 0:
            times_a.append(await a())
            times_b.append(await b())
        else:
            times_b.append(await b())
            times_a.append(await a())
    return statistics.median(times_a), statistics.median(times_b)


def children_cpu() -> float:
    """CPU seconds used by this process's finished subprocesses (ripgrep, git, the index's
    workers once reaped; 10 ms ticks on Linux)."""
    times = os.times()
    return times.children_user + times.children_system


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds < 10 else f"{seconds:.1f} s"


def us(seconds: float) -> str:
    return f"{seconds * 1e6:.{2 if seconds < 1e-6 else 1}f} µs"


def ratio(tether: float, baseline: float) -> str:
    return f"{tether / baseline:.2f}x" if baseline > 0 else "n/a"


def table(rows: list[Row]) -> str:
    head = ("what", "tether", "baseline", "ratio", "note")
    body = ((r.what, r.tether, r.baseline, r.ratio, r.note) for r in rows)
    cells = [head, *(tuple(c.replace("|", "\\|") for c in row) for row in body)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(head))]

    def line(row: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) + " |"

    rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(head), rule, *(line(row) for row in cells[1:])])
