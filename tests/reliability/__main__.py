"""Run the reliability campaigns and print their figures.

python -m tests.reliability                 # every campaign, CI's bounded scale
python -m tests.reliability --long          # every campaign at the long scale
python -m tests.reliability crash --seed 7  # one campaign, another seed
python -m tests.reliability crash --scale 40
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from tests.reliability.campaigns import CAMPAIGNS, SEED


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability")
    parser.add_argument("names", nargs="*", choices=[[], *CAMPAIGNS], default=[])
    parser.add_argument("--long", action="store_true", help="the long scale of each")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--scale", type=int, help="this scale instead (the campaign's unit)")
    args = parser.parse_args(argv)
    failed = 0
    for name in args.names or sorted(CAMPAIGNS):
        entry = CAMPAIGNS[name]
        scale = args.scale or (entry.long if args.long else entry.bounded)
        print(f"== {name}: {scale} {entry.unit}, seed {args.seed}", flush=True)
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix=f"tether-{name}-") as root:
            reports = asyncio.run(entry.run(args.seed, scale, Path(root)))
        for report in reports:
            print("\n".join(report.lines()), flush=True)
            failed += bool(report.violations)
        print(f"   ({time.perf_counter() - started:.0f} s)", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
