"""Mutation arms for the "batch call" nudge: each mutant must turn its tests red.

    python -m tests.mutation

Each arm copies the project to a scratch directory, applies one mutation to the loop,
and runs the tests that guard against it, with the scratch copy first on the import
path (the server subprocesses inherit it). The arm passes when those tests fail. The
same tests are first run unmutated in a scratch copy, so a red result means the
mutation, not a broken setup.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOOP = "server/tether/agent/loop.py"
NUDGE_TESTS = "tests/e2e/test_nudge.py"
CONTEXT = (
    "        messages = (*self.compactor.context(session), *([BATCH_NUDGE] if nudge else []))\n"
)


@dataclass(frozen=True)
class Arm:
    name: str
    old: str
    new: str
    tests: tuple[str, ...]


ARMS = (
    Arm(
        "the count comparison inverted",
        "self.reply(session, len(last) == 1, updates)",
        "self.reply(session, len(last) != 1, updates)",
        (
            f"{NUDGE_TESTS}::test_a_single_call_round_ends_the_next_request_with_the_nudge",
            f"{NUDGE_TESTS}::test_rounds_with_no_call_or_several_calls_append_nothing",
        ),
    ),
    Arm(
        "the message appended before the tool results",
        CONTEXT,
        "        context = self.compactor.context(session)\n"
        "        cut = len(context)\n"
        '        while cut and context[cut - 1].role == "tool":\n'
        "            cut -= 1\n"
        "        nudged = [BATCH_NUDGE] if nudge else []\n"
        "        messages = (*context[:cut], *nudged, *context[cut:])\n",
        (f"{NUDGE_TESTS}::test_a_single_call_round_ends_the_next_request_with_the_nudge",),
    ),
    Arm(
        "the message written into the session history",
        CONTEXT,
        "        if nudge:\n"
        "            self.store.append_user(session, BATCH_NUDGE.content)\n"
        "        messages = (*self.compactor.context(session),)\n",
        (f"{NUDGE_TESTS}::test_the_nudge_lives_only_in_its_request",),
    ),
)


def scratch_copy(into: Path, arm: Arm | None) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")
    for part in ("server", "tests"):
        shutil.copytree(ROOT / part, into / part, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", into / "pyproject.toml")
    if arm is None:
        return
    loop = into / LOOP
    source = loop.read_text()
    if source.count(arm.old) != 1:
        raise SystemExit(f"mutation {arm.name!r} no longer applies: update tests/mutation")
    loop.write_text(source.replace(arm.old, arm.new))


def run_tests(arm: Arm | None, tests: tuple[str, ...]) -> tuple[int, float]:
    with tempfile.TemporaryDirectory(prefix="tether-mutant-") as scratch:
        root = Path(scratch)
        scratch_copy(root, arm)
        env = {**os.environ, "PYTHONPATH": str(root / "server")}
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        return done.returncode, time.perf_counter() - started


def main() -> int:
    failures = 0
    print("| mutation | unmutated | mutated | verdict |")
    print("|---|---|---|---|")
    for arm in ARMS:
        clean, _ = run_tests(None, arm.tests)
        mutated, seconds = run_tests(arm, arm.tests)
        # pytest exits 1 when tests failed; anything else (errors, no tests) proves nothing.
        killed = clean == 0 and mutated == 1
        failures += not killed
        verdict = "killed" if killed else "SURVIVED"
        print(f"| {arm.name} | exit {clean} | exit {mutated} ({seconds:.0f} s) | {verdict} |")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
