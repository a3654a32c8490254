"""``python -m bench [--quick] [--detail]``: build the stdlib workspace, measure, print a table."""

from __future__ import annotations

import argparse
import asyncio
import logging
import tempfile
import time
from pathlib import Path

from bench import (
    checkpoint_row,
    dispatch_rows,
    grep_row,
    index_rows,
    mcp_row,
    request_row,
    sandbox_row,
    startup_row,
    tree,
    turn_row,
)
from bench.timing import Row, table
from tether.children import reap_without_threads


async def measure(workspace: Path, state: Path, quick: bool, detail: bool) -> list[Row]:
    reap_without_threads()  # as `tether serve` waits for its programs: the in-process rows
    reps = 3 if quick else 11
    rows: list[Row] = []
    for indexed in (True, False):
        reads, singles = await dispatch_rows.concurrent_vs_serial(workspace, state, reps, indexed)
        rows.append(reads)
        if detail:
            rows += singles
    rows.append(await dispatch_rows.overhead(workspace, state, reps))
    rows += await grep_row.rows(workspace, reps)
    rows += await index_rows.rows(workspace, state, quick, reps)
    rows.append(await startup_row.row(workspace, state, 3 if quick else 7))
    rows.append(await turn_row.row(workspace, state, reps))
    rows.append(await request_row.row(workspace, state, reps))
    rows.append(await sandbox_row.row(workspace, reps * 3))
    rows.append(await checkpoint_row.row(state, reps))
    rows.append(await mcp_row.row(workspace, state, reps))
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--detail", action="store_true", help="add each read's time alone")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the server's stderr is not the bench's output
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="tether-bench-") as tmp:
        workspace, files, size = tree.build(Path(tmp))
        built = time.perf_counter() - began
        state = Path(tmp, "state").resolve()
        state.mkdir()
        rows = asyncio.run(measure(workspace, state, args.quick, args.detail))
    total = time.perf_counter() - began
    print(
        f"workspace: the stdlib, {files} files, {size / 1e6:.0f} MB, in git "
        f"(built in {built:.1f} s); medians; ratio = tether / baseline\n"
    )
    print(table(rows))
    print(f"\ntotal {total:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
