"""Crash anywhere: kill -9 the server at random instants of scripted sessions, restart it,
and check that nothing was lost.

Each iteration starts a server on the same store, checks what the last kill left, starts
one scenario (a streamed answer, a batch of reads, a running command, an open dialog, a
patch, a compaction, a scheduled task, an approval resuming a parked turn) and kills the
server after a random delay. The checks, after every restart: the store opens; every
call of every session is answered exactly once (or waits, in a parked session); the
next request to the provider carries each call followed by exactly its results, in
order; a session known to be parked is still parked with the same calls pending; no
call a person allowed is answered as if it never had been (``denied``,
``not_executed``); a command that started never ran twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import sqlite3
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Editor, close
from tests.reliability.harness import (
    COMPACTION_SYSTEM,
    Report,
    Wire,
    answering,
    as_json,
    calls,
    campaign_workspace,
    check_history,
    check_request,
    last_user_text,
    start,
    text,
)
from tests.support.loopback import LoopbackStub, Scripted

SCENARIOS = (
    *("stream", "batch", "command", "dialog", "park", "patch", "compaction", "scheduled"),
    "approve",
)
RECENT = 8  # sessions checked after each kill besides the parked ones; all at the end
SETTLE_S = 30.0  # how long a turn this server runs (a due task's) may take to end


def policy(messages: list[dict[str, Any]], system: str, wire: Wire) -> Scripted:
    """What the model answers: by the scenario named in the prompt, then words."""
    if system == COMPACTION_SYSTEM:
        return text(wire, "summary: the person asked for things; they were done.", 0.02)
    prompt = last_user_text(messages)
    if prompt is None or prompt == "batch call":
        return text(wire, "All done, as asked.", 0.01)
    scenario, _, marker = prompt.partition(":")
    match scenario:
        case "stream":
            return text(wire, "A long answer, streamed slowly. " * 20, 0.01)
        case "batch" | "compaction" | "scheduled":
            return calls(
                wire,
                ("fs-read", {"path": "notes.txt"}),
                ("fs-list", {}),
                ("index-grep", {"pattern": "line"}),
                ("git-status", {}),
                ("git-head", {}),
                ("outline", {"path": "code.py"}),
            )
        case "command" | "dialog" | "park" | "approve":
            run = f"echo {marker} >> ran.log; sleep 0.3"
            return calls(wire, ("fs-read", {"path": "notes.txt"}), ("command", {"command": run}))
        case "patch":
            return calls(wire, ("patch", {"path": "notes.txt", "content": f"rewritten {marker}\n"}))
    return text(wire, "I do not know that scenario.")


class Crash:
    def __init__(self, seed: int, kills: int, wire: Wire, root: Path) -> None:
        self.rng = random.Random(seed)
        self.kills = kills
        self.wire = wire
        self.report = Report(f"crash anywhere ({wire})", seed)
        self.home = root / "home"
        self.workspace = campaign_workspace(root, code=True)
        self.parked: dict[str, list[str]] = {}  # session -> pending call ids, as last seen
        self.markers = 0

    async def run(self) -> Report:
        with answering(self.wire, policy) as stub:
            for iteration in range(self.kills):
                editor = await start(
                    self.workspace, stub, self.wire, self.home, **self.options(iteration)
                )
                try:
                    await self.check(iteration, editor, stub, RECENT)
                    await self.kill_during(iteration, editor, self.rng.choice(SCENARIOS))
                finally:
                    with contextlib.suppress(Exception):
                        await editor.client.stop()
            editor = await start(self.workspace, stub, self.wire, self.home)
            await self.check(self.kills, editor, stub, None)
            await close(editor)
        self.report.figures["kill points"] = self.kills
        return self.report

    def options(self, iteration: int) -> dict[str, Any]:
        # Every few servers compact at once: the context window is tiny for them.
        if iteration % 4 == 3:
            return {"turn": {"context_tokens": 200, "compact_at": 0.1, "keep_rounds": 1}}
        return {}

    async def kill_during(self, iteration: int, editor: Editor, scenario: str) -> None:
        self.markers += 1
        marker = f"m{iteration}x{self.markers}"
        editor.answers = [] if scenario == "park" else ["Allow"] * 4
        action: Any
        if scenario == "dialog":
            editor.hold_dialogs = True
        if scenario == "approve" and self.parked:
            session = self.rng.choice(sorted(self.parked))
            del self.parked[session]  # decided now: it may run, or be cut by the kill
            action = editor.command("tether.approve", {"session": session})
        elif scenario == "scheduled":
            task = {"prompt": f"scheduled:{marker}", "every": "1s"}
            action = editor.command("tether.schedule", task)
        else:
            action = editor.run(f"{scenario}:{marker}")
        task = asyncio.ensure_future(action)
        await asyncio.sleep(self.rng.uniform(0.0, 1.2))
        self.report.count(f"kills during {scenario}")
        if task.done() and not task.exception():
            result = task.result()
            if isinstance(result, dict) and result.get("status") == "awaiting_approval":
                self.parked[result["session"]] = [p["call_id"] for p in result["pending"]]
        editor.kill()
        task.cancel()
        with contextlib.suppress(BaseException):
            await task

    async def check(
        self, iteration: int, editor: Editor, stub: LoopbackStub, recent: int | None
    ) -> None:
        """What the last kill left: the checks of the module's docstring (for the newest
        ``recent`` sessions and the parked ones; for every session when None)."""
        for task in (await editor.command("tether.tasks", {}))["tasks"]:
            await editor.command("tether.unschedule", {"task": task["id"]})
        listed = await self.settled(editor)
        if recent is not None:
            listed = listed[:recent] + [s for s in listed[recent:] if s["id"] in self.parked]
        for session in listed:
            history = await editor.history(session["id"])
            parked = session["status"] == "awaiting_approval"
            self.report.count("session checks")
            for problem in check_history(history, parked):
                what = f"session {session['id']} ({session['status']})"
                self.report.violate(iteration, f"{what}: {problem}")
            if (was := self.parked.get(session["id"])) is not None:
                now = [p["call_id"] for p in history["pending"]]
                if not parked or now != was:
                    self.report.violate(iteration, f"parked {was}, now {session['status']} {now}")
        self.check_store(iteration)
        self.check_commands(iteration)
        statuses = {s["id"]: s["status"] for s in listed}
        idle = [
            id_
            for id_, status in statuses.items()
            if status not in ("running", "awaiting_approval")
        ]
        if idle:
            before = len(stub.requests)
            chosen = self.rng.choice(idle)
            result = await editor.run("stream:next", chosen)
            self.report.count("requests checked", len(stub.requests) - before)
            for body in stub.requests[before:]:
                for problem in check_request(body, self.wire):
                    self.report.violate(iteration, f"request: {problem}")
            if result["status"] != "done":
                asked = stub.requests[before:]
                said = as_json(asked[-1]["messages"][-1]) if asked else "no request"
                self.report.violate(
                    iteration,
                    f"the next turn ended {result['status']} ({as_json(result)});"
                    f" the session was {statuses[chosen]}; its last request ended with {said}",
                )

    async def settled(self, editor: Editor) -> list[dict[str, Any]]:
        """The sessions, once none runs a turn: a task the last kill left scheduled may be
        due as this server starts, and its turn (running here, its calls being answered)
        is no crash's leftover. A session a dead server left running shows interrupted."""
        deadline = asyncio.get_running_loop().time() + SETTLE_S
        waited = False
        while True:
            listed: list[dict[str, Any]] = (await editor.command("tether.sessions", {}))["sessions"]
            running = [s for s in listed if s["status"] == "running"]
            if not running or asyncio.get_running_loop().time() > deadline:
                self.report.count("checks that waited for a due task's turn", waited)
                return listed
            waited = True
            await asyncio.sleep(0.1)

    def check_store(self, iteration: int) -> None:
        db = sqlite3.connect(self.home / "sessions.sqlite3")
        try:
            rows = db.execute(
                "SELECT call_id, status FROM tool_calls WHERE decision = 'allow'"
                " AND status IN ('denied', 'not_executed')"
            ).fetchall()
        finally:
            db.close()
        for call_id, status in rows:
            self.report.violate(iteration, f"allowed call {call_id} answered {status}")

    def check_commands(self, iteration: int) -> None:
        log = self.workspace / "ran.log"
        ran = log.read_text().split() if log.exists() else []
        twice = sorted({m for m in ran if ran.count(m) > 1})
        if twice:
            self.report.violate(iteration, f"commands ran twice: {twice}")
        self.report.figures["commands run"] = len(ran)


async def campaign(seed: int, kills: int, root: Path) -> list[Report]:
    return [await one_wire(seed, kills, root, wire) for wire in ("openai", "anthropic")]


async def one_wire(seed: int, kills: int, root: Path, wire: Wire) -> Report:
    """One wire format's run alone (``--wire``): half the time of both, the same kills."""
    where = root / wire
    where.mkdir(parents=True, exist_ok=True)
    return await Crash(seed, kills, wire, where).run()
