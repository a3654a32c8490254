"""Run the reliability campaigns and print their figures.

python -m tests.reliability                 # every campaign, CI's bounded scale
python -m tests.reliability --long          # every campaign at the long scale
python -m tests.reliability crash --seed 7  # one campaign, another seed
python -m tests.reliability crash --scale 40
python -m tests.reliability crash --wire anthropic --scale 144  # one wire format
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import get_args

from tests.reliability.campaigns import CAMPAIGNS, SEED, Entry
from tests.reliability.harness import Report, Wire


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability")
    parser.add_argument("names", nargs="*", choices=[[], *CAMPAIGNS], default=[])
    parser.add_argument("--long", action="store_true", help="the long scale of each")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--scale", type=int, help="this scale instead (the campaign's unit)")
    parser.add_argument("--wire", choices=get_args(Wire), help="this wire format alone")
    args = parser.parse_args(argv)
    names = args.names or sorted(CAMPAIGNS)
    if args.wire and (together := [n for n in names if CAMPAIGNS[n].one_wire is None]):
        parser.error(f"--wire: {', '.join(together)} cannot run one wire format alone")
    failed = 0
    for name in names:
        entry = CAMPAIGNS[name]
        scale = args.scale or (entry.long if args.long else entry.bounded)
        print(f"== {name}: {scale} {entry.unit}, seed {args.seed}", flush=True)
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"tether-{name}-") as root:
            reports = asyncio.run(run(entry, args.seed, scale, Path(root), args.wire))
        for report in reports:
            print("\n".join(report.lines()), flush=True)
            failed += bool(report.violations)
        print(f"   ({time.perf_counter() - started:.0f} s)", flush=True)
    return 1 if failed else 0


async def run(entry: Entry, seed: int, scale: int, root: Path, wire: Wire | None) -> list[Report]:
    if wire is None or entry.one_wire is None:
        return await entry.run(seed, scale, root)
    return [await entry.one_wire(seed, scale, root, wire)]


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
