"""Cancel anywhere: ``tether.cancel``, ``$/cancelRequest`` on the ``tether.run`` request,
and the progress's cancel (``window/workDoneProgress/cancel``), each at a random instant
of a turn.

Lanes (one session each) run turns side by side on one server per wire format. Each
turn is one scenario that would run far longer than the cancel takes to come (a slow
answer, a provider that goes quiet, a batch of reads then a slow answer, a command
whose children sleep, a dialog left open, a command after reads in one reply, a new
prompt on a session parked on a dismissed dialog); after a random delay (a fifth at
once, a fifth within 50 ms, the rest within a second) the lane cancels it by one of the
three routes.

The checks: every request the lane sent is answered; the ``tether.run`` ends
``cancelled`` (a ``$/cancelRequest`` that reached the server before the request itself
may be answered ``RequestCancelled``, LSP's own answer, only if no turn began);
``tether.cancel`` finds the turn at the first try; a turn that began leaves its
session ``cancelled``, one that did not leaves it as it was, and every call of the
session's history has exactly one answer; no process a command started survives (on
Linux, no process whose command line carries the turn's mark: the shell, its subshell,
its sleeps and a sandbox around them; elsewhere, the pids the command wrote); and the
session takes the next prompt (a plain turn ends ``done``). Every request the provider
was handed is well formed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Editor, close
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
from tests.support import anthropic_stub, provider_stub
from tests.support.loopback import LoopbackStub, Scripted

SCENARIOS = ("stream", "hang", "reads", "command", "dialog", "mixed", "parked")
ROUTES = ("tether.cancel", "$/cancelRequest", "progress")
LANES = 3  # turns running at once on each server
LATEST_S = 1.0  # the latest instant of a cancel, after the turn was sent
GONE_S = 3.0  # how long a killed process may take to disappear
LINUX = sys.platform.startswith("linux")
REQUEST_CANCELLED = -32800  # LSP's error code for a request cancelled before it ran
ANSWER_S = 30.0  # how long an answer may take before it counts as never given


def hang(wire: Wire, seconds: float) -> Scripted:
    if wire == "openai":
        return provider_stub.hang(seconds)
    return anthropic_stub.hang(seconds)


def children(tag: str) -> str:
    """A command whose children sleep long: the shell, two background sleeps, and a
    subshell's sleep, each pid (but the last) written to ``pids/``. Each process carries
    the turn's mark in its command line (the shell and subshell in the command's text, a
    sleep in its argument), by which it is found whatever PID namespace (a sandbox) it
    ran in."""
    nap = mark(tag)
    return (
        f"echo $$ > pids/{tag}.sh; sleep {nap} & echo $! > pids/{tag}.1; "
        f"(sleep {nap}; true) & echo $! > pids/{tag}.2; wait"
    )


def mark(tag: str) -> str:
    """30 seconds, spelled uniquely for the turn (``o27`` -> ``30.11000027``, ``a27p``, a
    turn to park, -> ``30.22000027``)."""
    wire, parking = 1 + (tag[0] == "a"), 1 + tag.endswith("p")
    return f"30.{wire}{parking}{int(tag[1:].removesuffix('p')):06d}"


def policy(messages: list[dict[str, Any]], system: str, wire: Wire) -> Scripted:
    kind, _, tag = prompt_of(messages).partition(":")
    fresh = bool(messages) and said(messages[-1]) is not None
    slow = text(wire, f"answer {tag}: " + "a slow word " * 30, 0.05)  # about 2 s
    if kind in ("next", "text"):
        return text(wire, f"answer {tag}: quick.")
    if not fresh or kind == "stream":
        return slow
    match kind:
        case "hang":
            return hang(wire, 30)
        case "reads":
            reads = [("fs-read", {"path": "notes.txt"}), ("fs-list", {}), ("git-status", {})]
            return calls_saying(
                wire, f"reading for {tag}", *reads, ("index-grep", {"pattern": "x"})
            )
        case "command" | "dialog" | "park":
            return calls_saying(wire, f"running for {tag}", ("command", {"command": children(tag)}))
        case "mixed":
            made: tuple[tuple[str, dict[str, Any]], ...] = (
                ("fs-read", {"path": "notes.txt"}),
                ("command", {"command": children(tag)}),
                ("fs-list", {}),
            )
            return calls_saying(wire, f"running for {tag}", *made)
    return slow


class Cancel:
    def __init__(self, seed: int, turns: int, root: Path) -> None:
        self.rng = random.Random(seed)
        self.turns = turns
        self.report = Report("cancel anywhere", seed)
        self.home = root / "home"
        self.workspace = campaign_workspace(root)
        self.pids = self.workspace / "pids"
        self.pids.mkdir()
        self.sent = 0
        self.latencies: list[float] = []

    async def run(self) -> Report:
        wires: tuple[Wire, ...] = ("openai", "anthropic")
        for at, wire in enumerate(wires):
            share = self.turns // 2 + (self.turns % 2 if at == 0 else 0)
            with answering(wire, policy) as stub:
                await self.serve(wire, stub, share)
                self.report.count("requests checked", len(stub.requests))
                for body in stub.requests:
                    for problem in check_request(body, wire):
                        self.report.violate(-1, f"{wire} request: {problem}")
        self.latencies.sort()
        if self.latencies:
            p50 = self.latencies[len(self.latencies) // 2]
            self.report.figures["cancel to result p50 ms"] = round(p50 * 1000)
            self.report.figures["cancel to result max ms"] = round(self.latencies[-1] * 1000)
        return self.report

    async def serve(self, wire: Wire, stub: LoopbackStub, turns: int) -> None:
        editor = await start(self.workspace, stub, wire, self.home)
        dialogs = Dialogs(editor)
        try:
            per_lane = [
                turns // LANES + (1 if lane < turns % LANES else 0) for lane in range(LANES)
            ]
            await asyncio.gather(
                *(self.lane(editor, dialogs, wire, lane, n) for lane, n in enumerate(per_lane))
            )
        finally:
            await close(editor)

    async def lane(self, editor: Editor, dialogs: Dialogs, wire: Wire, lane: int, n: int) -> None:
        first = await editor.run(f"text:{wire}{lane}start")
        session = first["session"]
        for _ in range(n):
            self.sent += 1
            iteration = self.sent
            scenario, route = self.rng.choice(SCENARIOS), self.rng.choice(ROUTES)
            delay = self.instant()
            tag = f"{wire[0]}{iteration}"
            if not await self.one(iteration, editor, dialogs, session, scenario, route, delay, tag):
                return

    def instant(self) -> float:
        """When the cancel comes: anywhere in the turn mostly; a fifth at once, a fifth
        within the first 50 ms, as the turn begins."""
        edge = self.rng.random()
        if edge < 0.2:
            return 0.0
        return self.rng.uniform(0.0, 0.05 if edge < 0.4 else LATEST_S)

    async def one(
        self,
        iteration: int,
        editor: Editor,
        dialogs: Dialogs,
        session: str,
        scenario: str,
        route: str,
        delay: float,
        tag: str,
    ) -> bool:
        """One turn, cancelled; False when the lane cannot go on (a request unanswered)."""
        what = f"{scenario} cancelled by {route} after {delay:.2f} s"
        self.report.count(f"cancels during {scenario}")
        if scenario == "parked":  # a turn parked on a dismissed dialog, then a new prompt
            dialogs.answer[f"{tag}p"] = "dismiss"
            try:
                parked = await editor.run(f"park:{tag}p", session)
            except JsonRpcException as exc:
                parked = {"error": str(exc)}
            if parked.get("status") != "awaiting_approval":
                self.report.violate(iteration, f"{what}: the turn to park ended {parked}")
                return False
            scenario = "stream"
        prompt = f"{scenario}:{tag}"
        dialogs.answer[tag] = "hold" if scenario == "dialog" else "allow"
        msg_id = f"run-{tag}"
        argument = {"prompt": prompt, "session": session}
        run = asyncio.ensure_future(editor.command("tether.run", argument, msg_id=msg_id))
        await asyncio.sleep(delay)
        self.report.count(f"cancels by {route}")
        sent_at = time.monotonic()
        # Waited for, never cancelled: a request the client gave up on would make its late
        # answer an error of the client's own.
        cancelling = asyncio.ensure_future(
            self.cancel(iteration, what, editor, route, session, msg_id, prompt, run)
        )
        await asyncio.wait([run, cancelling], timeout=ANSWER_S, return_when="ALL_COMPLETED")
        if not (run.done() and cancelling.done()):
            unanswered = "tether.run" if not run.done() else "the cancel"
            self.report.violate(iteration, f"{what}: {unanswered} went unanswered")
            return False
        result: dict[str, Any] = {}
        try:
            cancelling.result()
            result = run.result()
        except JsonRpcException as exc:
            result = {"code": exc.code, "error": str(exc)}
        self.latencies.append(time.monotonic() - sent_at)
        began = await self.check_session(iteration, editor, session, prompt, what)
        if result.get("code") == REQUEST_CANCELLED and not began:
            # Cancelled before its turn began: LSP's own answer, and no turn ran.
            self.report.count("answered RequestCancelled before the turn began")
        elif result.get("status") != "cancelled":
            self.report.violate(iteration, f"{what}: the turn ended {result}")
        await self.check_processes(iteration, tag, what)
        return await self.check_next(iteration, editor, session, tag, what)

    async def cancel(
        self,
        iteration: int,
        what: str,
        editor: Editor,
        route: str,
        session: str,
        msg_id: str,
        prompt: str,
        run: asyncio.Future[Any],
    ) -> None:
        """Cancel by ``route``. ``tether.cancel`` must find the turn: the server takes the
        ``tether.run`` sent before it first, and the turn claims its session as it is taken.
        The progress can be cancelled only once the editor has it: until then, it waits."""
        if route == "$/cancelRequest":
            editor.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            return
        while not run.done():
            if route == "tether.cancel":
                took = await editor.command("tether.cancel", {"session": session})
                if took["cancelled"]:
                    return
                if not run.done():
                    self.report.violate(iteration, f"{what}: tether.cancel found no turn")
            else:
                token = editor.progress_of(prompt)
                if token is not None:
                    params = types.WorkDoneProgressCancelParams(token=token)
                    editor.client.window_work_done_progress_cancel(params)
                    return
            await asyncio.wait([run], timeout=0.02)

    async def check_session(
        self, iteration: int, editor: Editor, session: str, prompt: str, what: str
    ) -> bool:
        """A turn that began (its prompt is kept) ended ``cancelled`` with every call
        answered; one cancelled before it began left the session as it was. Whether the
        turn began."""
        listed = (await editor.command("tether.sessions", {}))["sessions"]
        status = next((s["status"] for s in listed if s["id"] == session), None)
        history = await editor.history(session)
        began = any(m["role"] == "user" and m["content"] == prompt for m in history["messages"])
        if not began:
            self.report.count("cancelled before the turn began")
        elif status != "cancelled":
            self.report.violate(iteration, f"{what}: the session is {status}")
        parked = not began and status == "awaiting_approval"
        for problem in check_history(history, parked=parked):
            self.report.violate(iteration, f"{what}: {problem}")
        self.report.count("session checks")
        return began

    async def check_processes(self, iteration: int, tag: str, what: str) -> None:
        """No process of the command is left. On Linux a process is found by the turn's
        mark in its command line (a sandbox's PID namespace makes the pids it wrote its
        own); elsewhere by the pids written."""
        files = sorted(self.pids.glob(f"{tag}.*"))
        pids = {int(p.read_text().split()[0]) for p in files if p.read_text().strip()}
        if not pids:
            return
        self.report.count("command processes recorded", len(pids))
        deadline = time.monotonic() + GONE_S
        while True:
            alive = marked(tag) if LINUX else sorted(pid for pid in pids if living(pid))
            if not alive or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.05)
        for pid in alive:
            self.report.violate(iteration, f"{what}: process {pid} of the command survived")
            with contextlib.suppress(OSError):
                os.kill(pid, 9)

    async def check_next(
        self, iteration: int, editor: Editor, session: str, tag: str, what: str
    ) -> bool:
        argument = {"prompt": f"next:{tag}n", "session": session}
        run = asyncio.ensure_future(editor.command("tether.run", argument))
        await asyncio.wait([run], timeout=ANSWER_S)
        if not run.done():
            self.report.violate(iteration, f"{what}: the next prompt went unanswered")
            return False
        try:
            status = run.result().get("status")
        except JsonRpcException as exc:
            status = f"with the error {exc}"
        if status != "done":
            self.report.violate(iteration, f"{what}: the next prompt ended {status}")
        self.report.count("next prompts done")
        return True


class Dialogs:
    """The editor's approval dialogs, answered by the turn's tag: allowed at once, held
    open (the server takes it back when the turn ends), or dismissed (the turn parks)."""

    def __init__(self, editor: Editor) -> None:
        self.answer: dict[str, str] = {}
        setattr(editor, "on_dialog", self.on_dialog)  # noqa: B010 (the instance's handler)

    async def on_dialog(self, params: types.ShowMessageRequestParams) -> Any:
        tag = next((t for t in self.answer if f"pids/{t}.sh" in params.message), None)
        answer = self.answer.pop(tag, "allow") if tag is not None else "allow"
        if answer == "hold":
            await asyncio.sleep(60)  # taken back long before
        return None if answer == "dismiss" else types.MessageActionItem(title="Allow")


def living(pid: int) -> bool:
    """Whether a process exists (elsewhere than Linux, where there is no /proc)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def marked(tag: str) -> list[int]:
    """Live processes (not zombies) whose command line holds the turn's mark or its pid
    files' names: the shell, its subshell, the sleeps, and a sandbox around them."""
    needles = (f"pids/{tag}.sh".encode(), mark(tag).encode())
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            line = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state not in ("Z", "X") and any(needle in line for needle in needles):
            found.append(int(entry.name))
    return sorted(found)


async def campaign(seed: int, turns: int, root: Path) -> list[Report]:
    return [await Cancel(seed, turns, root).run()]
