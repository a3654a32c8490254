"""Soak: one server, many scripted turns across 20 sessions, and whether it stays the same
server: memory, the time it adds to a turn, open files and threads.

Lanes run turns side by side, each on sessions of its own (a streamed answer, a batch of
reads, a command, a patch; an editor reading ``tether.history`` and ``tether.sessions``
now and then). First a burst (one turn on every session at once) fills the pools a
server keeps (the thread pool, the provider's connections). Every 100 turns, with no
turn running, the server's resident memory (``VmRSS``), open file descriptors
(``/proc/PID/fd``) and threads (``Threads``) are read.

A turn's overhead is its time as the editor sees it less the time the stub took to answer
its requests (the stub's own latency). Its p50 and p99 over the first 100 turns and over
the last 100 are printed; they grow with the sessions, whose whole history each request
carries. So that a server that ages (a leak, a table that grows) shows apart from
sessions that grow, probes of 20 turns on fresh sessions, one at a time, run after the
first 100 turns and again at the end.

The checks: every turn ends ``done``; every session's history is valid and every request
the provider was handed is well formed; memory at the end is within 10% of memory after
the first 100 turns; descriptors do not grow, nor threads past the main thread, the
stdin reader (``lsp/serving.py``) and asyncio's default executor (whose workers start on
demand and stay: all of them by 3,000 turns); the probes' overhead does not grow (p50
within 1.5 times the start's plus 10 ms, p99 within 3 times the start's plus 20 ms; a
growth is probed again once, and the second probe decides), and the turns' own (p50
within 3 times plus 50 ms, p99 within 6 times plus 100 ms: their sessions' histories
grew). The /proc readings are Linux's;
elsewhere they are skipped and said to be.
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Editor, close
from tests.reliability import soak_trace
from tests.reliability.harness import (
    Report,
    Wire,
    answering,
    campaign_workspace,
    check_history,
    check_request,
    start,
    text,
)
from tests.reliability.servers import calls_saying, prompt_of, said
from tests.support.loopback import Exchange, Scripted

SESSIONS = 20
LANES = 4
WARM = 100  # turns between readings, and the window of each percentile
PROBES = 20  # turns on fresh sessions, after the first 100 turns and at the end
FRESH_BOUND = (1.5, 10)  # the probes' p50 at the end: within 1.5 times the start's + 10 ms
# asyncio's default executor (``to_thread``) starts its workers one at a time, as calls
# find none idle, up to this many, and keeps them: the one pool whose growth is no leak.
EXECUTOR_THREADS = min(32, (os.cpu_count() or 1) + 4)
# tether's own watch of the files (the editor here watches none): its thread, and the one
# Rust's notify starts.
WATCH_THREADS = 2
KINDS = ("text", "text", "reads", "reads", "command", "patch")
WIRE: Wire = "openai"


@dataclass
class Clock:
    """The stub's own time per turn (by the turn's tag), summed over its requests."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    spent: dict[str, float] = field(default_factory=dict)

    def add(self, tag: str, seconds: float) -> None:
        with self.lock:
            self.spent[tag] = self.spent.get(tag, 0.0) + seconds

    def of(self, tag: str) -> float:
        with self.lock:
            return self.spent.get(tag, 0.0)


class Timed(Scripted):
    def __init__(self, inner: Scripted, tag: str, clock: Clock) -> None:
        self.inner, self.tag, self.clock = inner, tag, clock

    def serve(self, exchange: Exchange) -> None:
        began = time.perf_counter()
        try:
            self.inner.serve(exchange)
        finally:
            self.clock.add(self.tag, time.perf_counter() - began)


def policy_for(clock: Clock) -> Any:
    def policy(messages: list[dict[str, Any]], system: str, wire: Wire) -> Scripted:
        kind, _, tag = prompt_of(messages).partition(":")
        fresh = bool(messages) and said(messages[-1]) is not None
        answer: Scripted
        if not fresh or kind == "text":
            answer = text(wire, f"answer {tag}: all is well with this project.", 0.005)
        elif kind == "reads":
            answer = calls_saying(
                wire,
                f"reading for {tag}",
                ("fs-read", {"path": "notes.txt"}),
                ("fs-list", {}),
                ("index-grep", {"pattern": "line"}),
                ("git-status", {}),
                ("outline", {"path": "code.py"}),
            )
        elif kind == "command":
            answer = calls_saying(wire, f"running for {tag}", ("command", {"command": "echo hi"}))
        else:
            edit = {"path": f"out/{tag}.txt", "content": f"written by {tag}\n"}
            answer = calls_saying(wire, f"writing for {tag}", ("patch", edit))
        return Timed(answer, tag, clock)

    return policy


@dataclass(frozen=True)
class Reading:
    rss_kib: int
    fds: int
    threads: int


def read_process(pid: int) -> Reading | None:
    """The server as /proc shows it; None where there is no /proc (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    status = Path(f"/proc/{pid}/status").read_text().splitlines()
    fields = dict(line.split(":", 1) for line in status if ":" in line)
    return Reading(
        rss_kib=int(fields["VmRSS"].split()[0]),
        fds=len(list(Path(f"/proc/{pid}/fd").iterdir())),
        threads=int(fields["Threads"]),
    )


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


class Soak:
    def __init__(self, seed: int, turns: int, root: Path) -> None:
        self.rng = random.Random(seed)
        self.turns = turns
        self.report = Report("soak", seed)
        self.home = root / "home"
        self.workspace = campaign_workspace(root, code=True)
        (self.workspace / "out").mkdir()
        self.clock = Clock()
        self.overheads: list[float] = []  # per turn, in the order the turns ended
        self.probes: dict[str, list[float]] = {}
        self.readings: list[Reading] = []
        self.done = 0
        self.traced = soak_trace.directory()  # the debug run's (``soak_trace.py``)

    async def run(self) -> Report:
        with answering(WIRE, policy_for(self.clock)) as stub:
            traced = {} if self.traced is None else soak_trace.server_environment(self.traced)
            editor = await start(self.workspace, stub, WIRE, self.home, traced)
            editor.answers = ["Allow"] * (2 * self.turns + 1000)
            process = editor.client._server
            assert process is not None
            try:
                sessions = [(await editor.run(f"text:s{n}"))["session"] for n in range(SESSIONS)]
                await asyncio.gather(
                    *(editor.run(f"reads:b{n}", s) for n, s in enumerate(sessions))
                )
                for begin in range(0, self.turns, WARM):
                    await self.turns_on(editor, sessions, begin, min(self.turns, begin + WARM))
                    if begin == 0:
                        await self.probe(editor, "start")
                    await self.read(process.pid)
                await self.probe(editor, "end")
                if self.grew(self.probes, *FRESH_BOUND):
                    # Measured again once: an aging server stays slow; a machine busy for a
                    # moment (or the index rebuilt in the background) does not.
                    self.probes["end, first"] = self.probes.pop("end")
                    await self.probe(editor, "end", tags="again")
                await self.check(editor, sessions)
            finally:
                await close(editor)
            self.report.count("requests checked", len(stub.requests))
            for body in stub.requests:
                for problem in check_request(body, WIRE):
                    self.report.violate(self.turns, f"request: {problem}")
        self.figures()
        return self.report

    async def read(self, pid: int) -> None:
        """The server at rest: the least of three readings a tenth of a second apart, so a
        process a command left being reaped, or a connection being closed, counts not."""
        readings = []
        for _ in range(3):
            if (reading := read_process(pid)) is None:
                return
            readings.append(reading)
            await asyncio.sleep(0.1)
        fds, threads = min(r.fds for r in readings), min(r.threads for r in readings)
        self.readings.append(Reading(readings[-1].rss_kib, fds, threads))
        if self.traced is not None:
            await soak_trace.snapshot(pid, self.traced)

    async def probe(self, editor: Editor, when: str, tags: str | None = None) -> None:
        """Turns on fresh sessions, one at a time: the overhead of a server, not of a
        session's history. ``tags``: their prompts' own (the stub's time is told by tag)."""
        spent = self.probes.setdefault(when, [])
        for number in range(PROBES):
            tag = f"{tags or when}{number}"
            prompt = f"{KINDS[number % len(KINDS)]}:{tag}"
            began = time.perf_counter()
            result = await editor.run(prompt)
            spent.append(time.perf_counter() - began - self.clock.of(tag))
            if result.get("status") != "done":
                self.report.violate(self.turns, f"probe {prompt} ended {result.get('status')}")

    async def turns_on(self, editor: Editor, sessions: list[str], begin: int, end: int) -> None:
        numbers = list(range(begin, end))
        lanes = [numbers[lane::LANES] for lane in range(LANES)]
        await asyncio.gather(
            *(self.lane(editor, sessions[lane::LANES], mine) for lane, mine in enumerate(lanes))
        )

    async def lane(self, editor: Editor, sessions: list[str], numbers: list[int]) -> None:
        for number in numbers:
            session = sessions[number // LANES % len(sessions)]
            tag = f"t{number}"
            prompt = f"{self.rng.choice(KINDS)}:{tag}"
            began = time.perf_counter()
            try:
                result = await editor.run(prompt, session)
            except JsonRpcException as exc:
                self.report.violate(number, f"{prompt} answered with the error {exc}")
                continue
            spent = time.perf_counter() - began
            self.overheads.append(spent - self.clock.of(tag))
            self.done += 1
            if result.get("status") != "done":
                self.report.violate(number, f"{prompt} ended {result.get('status')}")
            if self.rng.random() < 0.1:
                await editor.history(session)
                await editor.command("tether.sessions", {})

    async def check(self, editor: Editor, sessions: list[str]) -> None:
        for session in sessions:
            history = await editor.history(session)
            for problem in check_history(history, parked=False):
                self.report.violate(self.turns, f"session {session}: {problem}")
            self.report.count("session checks")

    def figures(self) -> None:
        figures = self.report.figures
        figures["turns"] = self.done
        window = min(WARM, len(self.overheads))
        if window:
            turns = {"start": self.overheads[:window], "end": self.overheads[-window:]}
            self.compare("turn overhead", turns, 3, 50)
        if self.probes.get("end"):
            self.compare("fresh-session overhead", self.probes, *FRESH_BOUND)
        if self.traced is not None:
            figures.update(soak_trace.growth(self.traced))
        if not self.readings:
            figures["/proc readings"] = "skipped (not Linux)"
            return
        first, last = self.readings[0], self.readings[-1]
        mib = [f"{r.rss_kib / 1024:.0f}" for r in self.readings]
        figures["RSS MiB every 100 turns"] = "/".join(mib)
        figures["fds"] = "/".join(str(r.fds) for r in self.readings)
        figures["threads"] = "/".join(str(r.threads) for r in self.readings)
        if abs(last.rss_kib - first.rss_kib) >= 0.1 * first.rss_kib:
            self.report.violate(self.turns, f"memory went from {first} to {last}")
        if last.fds > first.fds:
            self.report.violate(self.turns, f"descriptors grew: {first} -> {last}")
        fixed = 2 + EXECUTOR_THREADS + WATCH_THREADS  # main, stdin reader, the two pools
        if last.threads > max(first.threads, fixed):
            self.report.violate(self.turns, f"threads grew: {first} -> {last}")

    def compare(self, what: str, spent: dict[str, list[float]], times: float, ms: float) -> None:
        """Print p50/p99 at the start and at the end; the end may be at most ``times`` the
        start's p50 plus ``ms`` (p99: twice that)."""
        at = {when: [percentile(v, q) * 1000 for q in (0.5, 0.99)] for when, v in spent.items()}
        for when, (p50, p99) in at.items():
            self.report.figures[f"{what} p50/p99 ms at the {when}"] = f"{p50:.0f}/{p99:.0f}"
        if self.grew(spent, times, ms):
            self.report.violate(self.turns, f"the {what} grew: {at}")

    @staticmethod
    def grew(spent: dict[str, list[float]], times: float, ms: float) -> bool:
        """Whether the end's p50 is past ``times`` the start's plus ``ms`` (p99: twice that)."""
        (p50_start, p99_start), (p50_end, p99_end) = (
            [percentile(spent[when], q) * 1000 for q in (0.5, 0.99)] for when in ("start", "end")
        )
        return p50_end > times * p50_start + ms or p99_end > 2 * times * p99_start + 2 * ms


async def campaign(seed: int, turns: int, root: Path) -> list[Report]:
    return [await Soak(seed, turns, root).run()]
