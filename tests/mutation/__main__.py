"""Mutation arms for the loop's nudge and the dispatcher's rules: each mutant must turn
its tests red.

    python -m tests.mutation            # every arm
    python -m tests.mutation budget     # the arms whose name holds "budget"

Each arm copies the project to a scratch directory, changes one rule in the syntax
tree of one module (found by what the code says, never by its line or its
formatting), and runs the tests that guard that rule, with the scratch copy first
on the import path (the server subprocesses inherit it). The arm passes when those
tests fail. The same tests are first run unmutated in a scratch copy, so a red
result means the mutation, not a broken setup. A mutation that no longer finds
exactly one place to change stops the run: the arm must be updated with the code.
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOOP = "server/tether/agent/loop.py"
PLAN = "server/tether/agent/plan.py"
DISPATCH = "server/tether/agent/dispatch.py"
NUDGE = "tests/e2e/test_nudge.py"
UNIT_DISPATCH = "tests/unit/agent/test_dispatch.py"
PLAN_PROPERTIES = "tests/unit/agent/test_plan.py"

Mutation = Callable[[ast.Module], int]  # changes the tree; returns how many places changed


@dataclass(frozen=True)
class Arm:
    name: str
    module: str
    mutate: Mutation
    tests: tuple[str, ...]


def _in_function(tree: ast.Module, name: str) -> ast.FunctionDef | ast.AsyncFunctionDef:
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == name
    ]
    if len(found) != 1:
        raise SystemExit(f"mutation: {len(found)} functions named {name!r}, expected one")
    return found[0]


def compare(function: str, source: str, op: type[ast.cmpop]) -> Mutation:
    """Give the comparison that reads ``source`` (as ``ast.unparse`` writes it) in
    ``function`` the operator ``op``."""

    def mutate(tree: ast.Module) -> int:
        hits = [
            node
            for node in ast.walk(_in_function(tree, function))
            if isinstance(node, ast.Compare) and ast.unparse(node) == source
        ]
        for node in hits:
            node.ops = [op()]
        return len(hits)

    return mutate


def replace(function: str, starts: str, new: str) -> Mutation:
    """Replace the statement of ``function`` whose source starts with ``starts`` by ``new``."""

    def mutate(tree: ast.Module) -> int:
        # Found first, replaced after: the new statements may start the same way.
        places = [
            (statements, at)
            for node in ast.walk(_in_function(tree, function))
            for field in ("body", "orelse", "finalbody")
            if isinstance(statements := getattr(node, field, None), list)
            for at, statement in enumerate(statements)
            if isinstance(statement, ast.stmt) and ast.unparse(statement).startswith(starts)
        ]
        for statements, at in places:
            statements[at : at + 1] = ast.parse(new).body
        return len(places)

    return mutate


def _nudge(*names: str) -> tuple[str, ...]:
    return tuple(f"{NUDGE}::{name}" for name in names)


def _unit(*names: str) -> tuple[str, ...]:
    return tuple(f"{UNIT_DISPATCH}::{name}" for name in names)


ARMS = (
    Arm(
        "nudge: the count comparison inverted",
        LOOP,
        compare("_rounds", "len(last) == 1", ast.NotEq),
        _nudge(
            "test_a_single_call_round_ends_the_next_request_with_the_nudge",
            "test_rounds_with_no_call_or_several_calls_append_nothing",
        ),
    ),
    Arm(
        "nudge: appended before the tool results",
        LOOP,
        replace(
            "reply",
            "messages = ",
            "context = self.compactor.context(session)\n"
            "cut = len(context)\n"
            "while cut and context[cut - 1].role == 'tool':\n"
            "    cut -= 1\n"
            "messages = (*context[:cut], *([BATCH_NUDGE] if nudge else []), *context[cut:])\n",
        ),
        _nudge("test_a_single_call_round_ends_the_next_request_with_the_nudge"),
    ),
    Arm(
        "nudge: written into the session history",
        LOOP,
        replace(
            "reply",
            "messages = ",
            "if nudge:\n"
            "    self.store.transcript.append_user(session, BATCH_NUDGE.content)\n"
            "messages = (*self.compactor.context(session),)\n",
        ),
        _nudge("test_the_nudge_lives_only_in_its_request"),
    ),
    Arm(
        "order: approval-requiring calls run before the reads ahead of them",
        PLAN,
        replace(
            "_segments",
            "for idx in valid:",
            "for idx in sorted(valid, key=lambda i: steps[i].kind == 'read'):\n"
            "    if steps[idx].kind == 'read':\n"
            "        run.append(idx)\n"
            "        continue\n"
            "    if run:\n"
            "        yield _reads(run, steps)\n"
            "        run = []\n"
            "    yield Ask(idx)\n",
        ),
        (
            *_unit("test_approval_requiring_calls_run_in_order_with_the_reads_after_them"),
            f"{PLAN_PROPERTIES}::test_segments_keep_call_order_and_kind",
        ),
    ),
    Arm(
        "concurrency: the same call twice runs together",
        PLAN,
        replace("_reads", "distinct = ", "distinct = True"),
        (
            *_unit("test_duplicate_calls_run_in_order"),
            f"{PLAN_PROPERTIES}::test_reads_run_together_only_when_two_or_more_and_none_the_same",
        ),
    ),
    Arm(
        "budget: one call fewer than the budget allows",
        PLAN,
        compare("_tally", "used > counts.budget", ast.GtE),
        (
            *_unit("test_two_calls_crossing_the_budget_ask_once_and_an_extension_runs_them"),
            f"{PLAN_PROPERTIES}::test_the_budget_cuts_a_suffix_and_stops_the_turn",
        ),
    ),
    Arm(
        "guard: one identical call more than the limit",
        PLAN,
        compare("_tally", "seen[step.key] >= repeat_limit", ast.Gt),
        (
            *_unit("test_the_repeat_guard_stops_the_turn_at_the_limit"),
            f"{PLAN_PROPERTIES}::test_the_guard_fires_on_the_nth_identical_call_and_nothing_after_it_starts",
        ),
    ),
    Arm(
        "failure independence: a failing call takes its siblings down",
        DISPATCH,
        replace(
            "_execute",
            "try:\n    content = await c.tool.run(",
            "content = await c.tool.run(c.params, ctx)",
        ),
        _unit("test_a_failing_call_stops_none_of_its_siblings"),
    ),
    Arm(
        "one answer each: a cancelled reply's open calls are left unanswered",
        DISPATCH,
        replace("dispatch", "answers.close(", "pass"),
        _unit(
            "test_cancelling_answers_running_calls_interrupted_and_waiting_ones_not_executed",
            "test_a_cancel_during_the_budget_question_runs_nothing_more",
        ),
    ),
)


def scratch_copy(into: Path, arm: Arm | None) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")
    for part in ("server", "tests"):
        shutil.copytree(ROOT / part, into / part, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", into / "pyproject.toml")
    if arm is None:
        return
    module = into / arm.module
    tree = ast.parse(module.read_text())
    if (changed := arm.mutate(tree)) != 1:
        raise SystemExit(
            f"mutation {arm.name!r} changed {changed} places in {arm.module}, not one: "
            "update tests/mutation with the code"
        )
    module.write_text(ast.unparse(ast.fix_missing_locations(tree)))


def run_tests(arm: Arm | None, tests: tuple[str, ...]) -> tuple[int, float]:
    with tempfile.TemporaryDirectory(prefix="tether-mutant-") as scratch:
        root = Path(scratch)
        scratch_copy(root, arm)
        env = {**os.environ, "PYTHONPATH": str(root / "server")}
        command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *tests]
        started = time.perf_counter()
        done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True)
        return done.returncode, time.perf_counter() - started


def main(argv: list[str]) -> int:
    arms = [arm for arm in ARMS if not argv or any(word in arm.name for word in argv)]
    failures = 0
    print("| mutation | unmutated | mutated | verdict |")
    print("|---|---|---|---|")
    for arm in arms:
        clean, _ = run_tests(None, arm.tests)
        mutated, seconds = run_tests(arm, arm.tests)
        # pytest exits 1 when tests failed; anything else (errors, no tests) proves nothing.
        killed = clean == 0 and mutated == 1
        failures += not killed
        verdict = "killed" if killed else "SURVIVED"
        print(f"| {arm.name} | exit {clean} | exit {mutated} ({seconds:.0f} s) | {verdict} |")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
