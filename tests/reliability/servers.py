"""Two servers, one store: two editor windows (two ``tether serve`` processes on one
``state_dir``) and ``tether ask`` from a terminal drive one shared session and sessions
of their own, all at once.

Each round starts the windows' servers on the store (the wire format alternates by
round) and runs a few waves. In a wave, lanes of each window send ``tether.run`` back to
back on the shared session, on their own session and on the other window's session; a
third window parks a session of its own (it dismisses every dialog) and the two others
then decide its waiting call at the same instant, one allowing and one denying; both
read ``tether.sessions`` and ``tether.history`` throughout; and a ``tether ask
--session`` process lands at a random instant on one of the sessions.

The checks: every ``tether.run`` is answered with a result that is ``done`` or
``awaiting_approval`` (a dismissed dialog), or with the error that says the session is
busy (or, for a decision, that nothing waits); nothing a person is shown mentions
``database is locked`` or an internal error, or holds a traceback: a result, an error, a
message or log line a window is sent, ``tether ask``'s stderr, or a server's own log
(its stderr, which an editor shows in its output channel; a refusal logged there as a
traceback reads as a failure); the provider never serves two requests of one session at
once; each session's history is valid (``check_history``) and is a sequence of whole
turns: every assistant message after a prompt belongs to that prompt's turn, so two
turns of one session never interleave; every request the provider was handed is well
formed; a command ran at most once, and every call that ran carries the decision it ran
under.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sqlite3
import sys
import threading
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Editor, close
from tests.reliability.harness import (
    Report,
    Wire,
    answering,
    campaign_workspace,
    check_history,
    check_request,
    env_for,
    server_log,
    start,
    text,
)
from tests.support import anthropic_stub, provider_stub
from tests.support.loopback import Exchange, LoopbackStub, Scripted

WAVES = 3  # per round
WAVE_S = 4.0  # how long the lanes of a wave keep sending
KINDS = ("text", "text", "reads", "command")
BUSY = "a turn is already running on session"
NOTHING_WAITING = "has no calls waiting for approval"
FORBIDDEN = ("database is locked", "locked", "internal error", "Traceback")


# -- the model ---------------------------------------------------------------------------


def said(message: dict[str, Any]) -> str | None:
    """The person's newest words in a message (the batch nudge is not theirs). The
    Anthropic wire merges a prompt that follows tool results, or another prompt (of a
    turn cancelled before any reply), into the one user message: its last text counts."""
    if message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        return None if content == "batch call" else content
    texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
    texts = [t for t in texts if t != "batch call"]
    return texts[-1] if texts else None


def prompt_of(messages: list[dict[str, Any]]) -> str:
    """The prompt of the turn a request belongs to: the newest words of the person."""
    return next((p for m in reversed(messages) if (p := said(m)) is not None), "")


def first_prompt(messages: list[dict[str, Any]]) -> str:
    """The session's first prompt: which session a request belongs to."""
    return (said(messages[0]) or "") if messages else ""


class Watched(Scripted):
    """Serves an answer and notes whether another request of its session was being
    served at the same time (two turns of one session running at once)."""

    def __init__(self, inner: Scripted, session: str, watch: Watch) -> None:
        self.inner, self.session, self.watch = inner, session, watch

    def serve(self, exchange: Exchange) -> None:
        with self.watch.lock:
            if self.watch.serving.get(self.session):
                self.watch.overlaps.append(self.session)
            self.watch.serving[self.session] = self.watch.serving.get(self.session, 0) + 1
        try:
            self.inner.serve(exchange)
        finally:
            with self.watch.lock:
                self.watch.serving[self.session] -= 1


@dataclass
class Watch:
    lock: threading.Lock = field(default_factory=threading.Lock)
    serving: dict[str, int] = field(default_factory=dict)
    overlaps: list[str] = field(default_factory=list)


def calls_saying(wire: Wire, said: str, *made: tuple[str, dict[str, Any]]) -> Scripted:
    if wire == "openai":
        return provider_stub.tool_calls(*made, text=said)
    return anthropic_stub.tool_calls(*made, text=said)


def policy_for(watch: Watch) -> Any:
    def policy(messages: list[dict[str, Any]], system: str, wire: Wire) -> Scripted:
        kind, _, tag = prompt_of(messages).partition(":")
        fresh = bool(messages) and said(messages[-1]) is not None
        answer: Scripted
        if not fresh or kind == "text":
            answer = text(wire, f"answer {tag}: " + "all well here. " * 4, 0.02)
        elif kind == "reads":
            answer = calls_saying(
                wire,
                f"reading for {tag}",
                ("fs-read", {"path": "notes.txt"}),
                ("fs-list", {}),
                ("index-grep", {"pattern": "line"}),
                ("git-status", {}),
            )
        else:
            run = f"echo {tag} >> ran.log; sleep 0.2"
            made = (("fs-read", {"path": "notes.txt"}), ("command", {"command": run}))
            answer = calls_saying(wire, f"running for {tag}", *made)
        return Watched(answer, first_prompt(messages), watch)

    return policy


# -- the campaign --------------------------------------------------------------------------


@dataclass
class Ran:
    code: int
    out: str
    err: str


class Servers:
    def __init__(self, seed: int, rounds: int, root: Path) -> None:
        self.rng = random.Random(seed)
        self.rounds = rounds
        self.report = Report("two servers, one store", seed)
        self.home = root / "home"
        self.workspace = campaign_workspace(root)
        self.watch = Watch()
        self.turns = 0
        self.shared = ""
        self.own: dict[str, str] = {}  # server name -> its own session
        self.round = 0
        self.logs: dict[str, list[str]] = {}  # window -> its server's log, this round

    def tag(self, lane: str) -> str:
        self.turns += 1
        return f"r{self.round}t{self.turns}{lane}"

    def prompt(self, lane: str) -> str:
        return f"{self.rng.choice(KINDS)}:{self.tag(lane)}"

    async def run(self) -> Report:
        stubs: dict[Wire, LoopbackStub] = {}
        with contextlib.ExitStack() as stack:
            for each in ("openai", "anthropic"):
                stubs[each] = stack.enter_context(answering(each, policy_for(self.watch)))
            for at in range(self.rounds):
                self.round = at
                wire: Wire = ("openai", "anthropic")[at % 2]
                await self.one_round(stubs[wire], wire)
            for wire, stub in stubs.items():
                self.report.count("requests checked", len(stub.requests))
                for body in stub.requests:
                    for problem in check_request(body, wire):
                        self.report.violate(self.rounds, f"{wire} request: {problem}")
        for session in sorted(set(self.watch.overlaps)):
            self.report.violate(self.rounds, f"two requests of session {session!r} at once")
        self.report.figures["rounds"] = self.rounds
        self.report.figures["overlapping requests"] = len(self.watch.overlaps)
        return self.report

    async def one_round(self, stub: LoopbackStub, wire: Wire) -> None:
        editors = {name: await start(self.workspace, stub, wire, self.home) for name in "ABC"}
        self.logs = {name: server_log(editor) for name, editor in editors.items()}
        try:
            if not self.shared:
                self.shared = (await editors["A"].run(f"text:{self.tag('A')}"))["session"]
                for name, editor in editors.items():
                    self.own[name] = (await editor.run(f"text:{self.tag(name)}"))["session"]
                self.report.count("turns done", 4)
            for wave in range(WAVES):
                await self.wave(self.round * WAVES + wave, editors, stub, wire)
            await self.check(self.round, editors["A"])
            for name, editor in editors.items():
                self.check_told(self.round, name, editor)
        finally:
            for editor in editors.values():
                await close(editor)
        for name, lines in self.logs.items():
            self.check_log(self.round, name, lines)

    async def wave(
        self, iteration: int, editors: dict[str, Editor], stub: LoopbackStub, wire: Wire
    ) -> None:
        for name in "AB":
            editors[name].answers = [self.rng.choice(["Allow", "Allow", None]) for _ in range(200)]
        until = time.monotonic() + WAVE_S
        a, b, c = editors["A"], editors["B"], editors["C"]
        lanes = [
            self.lane(iteration, "A", a, lambda: self.shared, until),
            self.lane(iteration, "B", b, lambda: self.shared, until),
            self.lane(iteration, "A", a, lambda: self.own["A"], until),
            self.lane(iteration, "B", b, lambda: self.own["B"], until),
            self.lane(iteration, "A", a, lambda: self.own["B"], until),
            self.decisions(iteration, a, b, c, until),
            self.readers(iteration, editors, until),
            self.ask(iteration, stub, wire),
        ]
        await asyncio.gather(*lanes)

    async def lane(
        self, iteration: int, name: str, editor: Editor, session: Any, until: float
    ) -> None:
        """``tether.run`` on one session, again and again, until the wave ends."""
        while time.monotonic() < until:
            await asyncio.sleep(self.rng.uniform(0.0, 0.15))
            prompt = self.prompt(name)
            try:
                result = await within(60, editor.run(prompt, session()))
            except JsonRpcException as exc:
                self.refused(iteration, f"{name} tether.run", str(exc), BUSY)
                continue
            except TimeoutError:
                self.report.violate(iteration, f"{name}: tether.run {prompt} went unanswered")
                continue
            self.turn_result(iteration, f"{name} tether.run {prompt}", result)

    async def decisions(
        self, iteration: int, a: Editor, b: Editor, c: Editor, until: float
    ) -> None:
        """A third window parks its session (it dismisses every dialog); the two windows
        then decide the waiting call at the same instant, one allowing, one denying."""
        session = self.own["C"]
        while time.monotonic() < until:
            prompt = f"command:{self.tag('C')}"
            try:
                parked = await within(60, c.run(prompt, session))
            except (JsonRpcException, TimeoutError) as exc:
                self.report.violate(iteration, f"C: tether.run {prompt} failed: {exc!r}")
                return
            if parked.get("status") != "awaiting_approval":
                self.report.violate(iteration, f"C: {prompt} ended {parked.get('status')}")
                return
            self.report.count("turns parked")
            await asyncio.sleep(self.rng.uniform(0.0, 0.1))
            first, second = ("tether.approve", "tether.deny")
            if self.rng.random() < 0.5:
                first, second = second, first
            sent = [
                self.decide(iteration, "A", a, first, session),
                self.decide(iteration, "B", b, second, session),
            ]
            await asyncio.gather(*sent)

    async def decide(
        self, iteration: int, name: str, editor: Editor, command: str, session: str
    ) -> None:
        try:
            result = await within(60, editor.command(command, {"session": session}))
        except JsonRpcException as exc:
            self.refused(iteration, f"{name} {command}", str(exc), BUSY, NOTHING_WAITING)
            return
        except TimeoutError:
            self.report.violate(iteration, f"{name}: {command} went unanswered")
            return
        self.report.count("decisions taken")
        self.turn_result(iteration, f"{name} {command}", dict(result))

    async def readers(self, iteration: int, editors: dict[str, Editor], until: float) -> None:
        while time.monotonic() < until:
            await asyncio.sleep(self.rng.uniform(0.05, 0.2))
            editor = editors[self.rng.choice("AB")]
            try:
                if self.rng.random() < 0.5:
                    await within(30, editor.command("tether.sessions", {}))
                else:
                    session = self.rng.choice([self.shared, *self.own.values()])
                    await within(30, editor.history(session))
            except (JsonRpcException, TimeoutError) as exc:
                self.report.violate(iteration, f"a read failed: {exc!r}")
            self.report.count("reads while turns ran")

    async def ask(self, iteration: int, stub: LoopbackStub, wire: Wire) -> None:
        """``tether ask --session`` from a terminal, at a random instant of the wave."""
        await asyncio.sleep(self.rng.uniform(0.0, WAVE_S / 2))
        session = self.rng.choice([self.shared, self.shared, self.own["A"], self.own["B"]])
        prompt = self.prompt("T")
        ran = await tether_ask(self.workspace, env_for(stub, wire, self.home), session, prompt)
        self.report.count("tether ask runs")
        what = f"tether ask on {session}"
        if any(word in ran.err for word in FORBIDDEN):
            self.report.violate(iteration, f"{what}: stderr says {ran.err[-400:]!r}")
        if ran.code == 1 and BUSY in ran.err:
            self.report.count("busy refusals")
        elif ran.code in (0, 3):  # done, or a command left waiting: no terminal to ask on
            self.report.count("turns done" if ran.code == 0 else "turns parked")
        else:
            self.report.violate(iteration, f"{what}: exit {ran.code}, stderr {ran.err[-400:]!r}")

    def refused(self, iteration: int, what: str, error: str, *allowed: str) -> None:
        if any(word in error for word in FORBIDDEN) or not any(a in error for a in allowed):
            self.report.violate(iteration, f"{what} answered with the error {error!r}")
        elif BUSY in error:
            self.report.count("busy refusals")
        else:
            self.report.count("nothing waiting")

    def turn_result(self, iteration: int, what: str, result: dict[str, Any]) -> None:
        status = result.get("status")
        if status == "done":
            self.report.count("turns done")
        elif status == "awaiting_approval":
            self.report.count("turns parked")
        else:
            self.report.violate(iteration, f"{what} ended {status}: {json.dumps(result)[:300]}")

    async def check(self, iteration: int, editor: Editor) -> None:
        listed = (await editor.command("tether.sessions", {}))["sessions"]
        for session in listed:
            history = await editor.history(session["id"])
            self.report.count("session checks")
            parked = session["status"] == "awaiting_approval"
            problems = [*check_history(history, parked), *whole_turns(history["messages"])]
            for problem in problems:
                self.report.violate(iteration, f"session {session['id']}: {problem}")
            if session["status"] == "running":
                self.report.violate(iteration, f"session {session['id']} still running")
        self.check_commands(iteration)
        self.check_decisions(iteration)

    def check_told(self, iteration: int, name: str, editor: Editor) -> None:
        """What the window showed the person, or put in its log: nothing of a locked
        store or an internal error."""
        told = [m.message for m in editor.client.messages + editor.client.log_messages]
        self.report.count("editor messages checked", len(told))
        for message in told:
            if any(word in message for word in FORBIDDEN):
                self.report.violate(iteration, f"window {name} was told {message[:300]!r}")

    def check_log(self, iteration: int, name: str, lines: list[str]) -> None:
        """The server's own log: never a locked store, never a traceback."""
        self.report.count("server log lines checked", len(lines))
        for line in lines:
            if "locked" in line:
                self.report.violate(iteration, f"window {name}'s server logged {line[:300]!r}")
        tracebacks = [at for at, line in enumerate(lines) if line.startswith("Traceback")]
        self.report.count("tracebacks in the servers' logs", len(tracebacks))
        if tracebacks:
            after = lines[tracebacks[0] + 1 :]
            error = next((line for line in after if not line.startswith(" ")), "")
            self.report.violate(
                iteration,
                f"window {name}'s server logged {len(tracebacks)} tracebacks, the first of "
                f"{error[:300]!r}",
            )

    def check_commands(self, iteration: int) -> None:
        log = self.workspace / "ran.log"
        ran = log.read_text().split() if log.exists() else []
        twice = sorted({m for m in ran if ran.count(m) > 1})
        if twice:
            self.report.violate(iteration, f"commands ran twice: {twice}")
        self.report.figures["commands run"] = len(ran)

    def check_decisions(self, iteration: int) -> None:
        """A call that ran was allowed; one answered `denied` was denied."""
        db = sqlite3.connect(self.home / "sessions.sqlite3")
        try:
            rows = db.execute(
                "SELECT call_id, status, decision FROM tool_calls WHERE name = 'command'"
                " AND ((status IN ('ok', 'error', 'interrupted') AND decision = 'deny')"
                "   OR (status = 'denied' AND decision = 'allow'))"
            ).fetchall()
        finally:
            db.close()
        for call_id, status, decision in rows:
            self.report.violate(iteration, f"call {call_id} answered {status}, decided {decision}")


async def within(seconds: float, request: Awaitable[Any]) -> Any:
    """The answer to a request, or ``TimeoutError`` after ``seconds``. The request is never
    cancelled: the client would take its late answer for an error of its own."""
    answer = asyncio.ensure_future(request)
    await asyncio.wait([answer], timeout=seconds)
    if not answer.done():
        raise TimeoutError(f"no answer in {seconds:g} s")
    return answer.result()


def whole_turns(messages: list[dict[str, Any]]) -> list[str]:
    """Every assistant message after a prompt belongs to that prompt's turn (its tag), and
    every prompt got at least one: two turns of one session never interleaved."""
    problems: list[str] = []
    tag: str | None = None
    replies = 0
    for message in messages:
        if message["role"] == "user":
            if tag is not None and replies == 0:
                problems.append(f"turn {tag} has no reply before the next prompt")
            tag, replies = message["content"].partition(":")[2], 0
        elif message["role"] == "assistant":
            replies += 1
            if tag is None or tag not in message["content"]:
                problems.append(f"a reply {message['content'][:40]!r} inside turn {tag}")
    if tag is not None and replies == 0:
        problems.append(f"turn {tag} has no reply")
    return problems


async def tether_ask(workspace: Path, env: dict[str, str], session: str, prompt: str) -> Ran:
    env = env | {"TETHER_ASK_OPTIONS": json.dumps({"provider": {"max_retries": 0}})}
    env["NO_COLOR"] = "1"
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tether", "ask", "--session", session, prompt,
        cwd=workspace, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        async with asyncio.timeout(90):
            out, err = await process.communicate()
    except TimeoutError:
        process.kill()
        out, err = await process.communicate()
        return Ran(-1, out.decode(), err.decode() + "\n(timed out)")
    return Ran(process.returncode or 0, out.decode(), err.decode())


async def campaign(seed: int, rounds: int, root: Path) -> list[Report]:
    return [await Servers(seed, rounds, root).run()]
