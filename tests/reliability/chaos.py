"""Provider chaos: a provider that fails in every way it can, over hundreds of turns of
each wire format, through the real service and the real HTTP providers (no LSP).

Each request is answered, at random, cleanly (text, or calls of read-only tools, so the
calls get answered and the next request carries their results) or with a fault: a stall
(short, or past ``timeout_s``), a connection dropped at any byte of the answer (status
line and headers included), no HTTP at all, garbage (bytes, HTML, broken JSON, JSON of
shapes the API never sends, nesting deeper than any stack, token counts no integer
column holds), 429 and 5xx with and without ``Retry-After`` (seconds, a date, nonsense),
errors no retry helps, an error event mid-stream, a reply the token limit cuts inside a
call's arguments, and tool-call deltas sent twice or out of turn. Faults hit the
requests after tool results as well as the first. Every ``CLEAN_EVERY``th turn is
answered cleanly throughout, on the same session: it must end ``done``.

After each turn: the status is the contract's; an ``error`` names the provider and says
what happened in words (no traceback, no Python repr); the session's status is the
turn's; every call of the session is answered once, in order (``check_history``); the
replies stored are exactly those the stub sent whole, in order, text and calls (a call
whose deltas came twice or out of turn keeps its own arguments, or arguments that do not
parse and are answered as an error, never others); and every request the provider was
handed had each call followed by exactly its results (``check_request``).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import re
import time
from collections import Counter, deque
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, get_args

from tests.reliability.harness import Report, Wire, check_history, check_request, stub_for
from tests.support import anthropic_stub, provider_stub, stub_faults
from tests.support.loopback import Exchange, HangUp, LoopbackStub, Scripted
from tests.support.stub_faults import Delta
from tether import app
from tether.agent.approval import Nobody
from tether.agent.events import NoUpdates
from tether.config import Configuration
from tether.models import TurnStatus
from tether.service import Service
from tether.tools.base import NoDocuments, NoEditor

# The provider's read timeout: a long stall costs this much. A second, not less: a loaded
# CI machine once paused the stub's thread past 0.25 s, and the reply it then finished was
# counted as sent whole though tether had rightly given up on it.
TIMEOUT_S = 1.0
SHORT_STALL_S, LONG_STALL_S = 0.02, 1.5
TURNS_PER_SESSION = 8
CLEAN_EVERY = 5
MAX_ROUNDS = 3  # replies with calls in one turn, at most; then words
TURN_LIMIT_S = 30.0

READS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("fs-read", {"path": "notes.txt"}),
    ("fs-list", {"path": "."}),
    ("outline", {"path": "code.py"}),
    ("index-grep", {"pattern": "line"}),
    ("fs-find", {"pattern": "*.py"}),
)
WORDS = ("notes.txt holds two lines.", "Nothing here needs changing.", "Done: all read.")
FAULTS = {  # kind -> weight
    "clean": 30, "stall short": 5, "stall long": 3, "drop at byte": 12, "hang up": 4,
    "not http": 3, "garbage": 10, "retryable error": 10, "final error": 4, "error event": 4,
    "cut in call": 5, "duplicated delta": 5, "reordered deltas": 5,
}  # fmt: skip
NEEDS_CALLS = frozenset({"cut in call", "duplicated delta", "reordered deltas"})
TERMINAL = {"openai": b"data: [DONE]\n\n", "anthropic": b'"type":"message_stop"}\n\n'}
RETRY_AFTER: tuple[float | str | None, ...] = (
    *(None, 0, 0.01, 1, -3),
    *("Wed, 21 Oct 2015 07:28:00 GMT", "soon", "1e400"),
)
NOT_HTTP = (
    b"SSH-2.0-OpenSSH_9.6\r\n",
    b"\x00\xff\xfe not a response at all",
    b"HTTP/1.1 banana\r\n\r\n",
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n: and then nothing\n\n",
)
OA_OK = b'data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
AN_OK = (
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,'
    b'"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"ok"}}\n\n'
)
AN_STOP = b'event: message_stop\ndata: {"type":"message_stop"}\n\n'


def an_start(usage: bytes) -> bytes:
    return (
        b'event: message_start\ndata: {"type":"message_start","message":{"usage":%s}}\n\n' % usage
    )


def an_delta(usage: bytes) -> bytes:
    return (
        b'event: message_delta\ndata: {"type":"message_delta",'
        b'"delta":{"stop_reason":"end_turn"},"usage":%s}\n\n' % usage
    )


def oa_usage(usage: bytes) -> bytes:
    return b'data: {"choices":[],"usage":%s}\n\n' % usage


DEEP = b"[" * 100_000
# (what, the body of a 200 event stream, the text of the reply it makes whole or None)
GARBAGE: dict[Wire, tuple[tuple[str, bytes, str | None], ...]] = {
    "openai": (
        ("html", b"<html><body>502 Bad Gateway</body></html>\n", None),
        ("broken json", b'data: {"choices":[{"delta":{"content":"ok"\n\n', None),
        ("odd shape", b'data: {"choices": "x"}\n\n', None),
        ("odd shape", b'data: {"choices":[{"delta":{"content":5}}]}\n\n', None),
        ("odd shape", b'data: {"choices":[{"delta":{"tool_calls":[7]}}]}\n\n', None),
        ("deep nesting", b"data: " + DEEP + b"\n\n", None),
        ("keep-alives only", b": keep-alive\n\n: still here\n\n", None),
        ("llama.cpp error line", b'error: {"message":"model not loaded"}\n\n', None),
        ("numbers past any integer",
         OA_OK + oa_usage(b'{"prompt_tokens":1e400,"completion_tokens":1}') + TERMINAL["openai"],
         "ok"),
        ("token counts past SQLite",
         OA_OK + oa_usage(b'{"prompt_tokens":1e300,"completion_tokens":99999999999999999999}')
         + TERMINAL["openai"], "ok"),
        ("odd usage", OA_OK + oa_usage(b'{"prompt_tokens":"many","completion_tokens":-5}')
         + TERMINAL["openai"], "ok"),
        ("odd usage", OA_OK + oa_usage(b"7") + TERMINAL["openai"], "ok"),
        ("invalid utf-8",
         b'data: {"choices":[{"delta":{"content":"\xff\xfe ok"},"finish_reason":"stop"}]}\n\n'
         + TERMINAL["openai"], "\ufffd\ufffd ok"),
    ),
    "anthropic": (
        ("html", b"<html><body>502 Bad Gateway</body></html>\n", None),
        ("broken json",
         b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n', None),
        ("odd shape", b'event: content_block_start\ndata: {"content_block": 7}\n\n', None),
        ("odd shape", b'data: {"type":"content_block_delta","index":0,"delta":[1]}\n\n', None),
        ("deep nesting", b"data: " + DEEP + b"\n\n", None),
        ("keep-alives only", b": keep-alive\n\n: still here\n\n", None),
        ("numbers past any integer",
         an_start(b'{"input_tokens":1e400}') + AN_OK + an_delta(b'{"output_tokens":1}') + AN_STOP,
         "ok"),
        ("token counts past SQLite",
         an_start(b'{"input_tokens":1e300}') + AN_OK
         + an_delta(b'{"output_tokens":99999999999999999999}') + AN_STOP, "ok"),
        ("odd usage", an_start(b'{"input_tokens":"many"}') + AN_OK + an_delta(b"[]") + AN_STOP,
         "ok"),
        ("invalid utf-8",
         an_start(b"{}") + AN_OK.replace(b'"text":"ok"', b'"text":"\xff\xfe ok"') + AN_STOP,
         "\ufffd\ufffd ok"),
    ),
}  # fmt: skip
# Error bodies no JSON reader can take apart, or of shapes no API sends.
ODD_ERROR_BODIES = (DEEP, b"<html>502 Bad Gateway</html>", b'{"error": 5}', b'{"error": [{}]}')
# A reason that is a Python error rather than words for a person.
NOT_WORDS = re.compile(
    r"Traceback|internal error|File \"|object at 0x|\b[A-Z]\w*(Error|Exception)\(|\bNone\b"
)
REASON_KINDS = (  # how an error reason is tallied: the first phrase it holds
    ("went", "without a word"), ("HTTP 4xx", "answered HTTP 4"), ("HTTP 5xx", "answered HTTP 5"),
    ("token limit", "token limit"), ("unreadable", "unreadable chunk"),
    ("not an event", "not a server-sent event"), ("odd shape", "shape tether does not know"),
    ("mid-reply error", "failed mid-reply"), ("ended early", "ended the stream"),
    ("connection", "connection"), ("unreachable", "could not reach"),
)  # fmt: skip


@dataclass(frozen=True)
class Expected:
    """A reply the stub sent whole: what the store must keep of it. ``exact`` False: its
    deltas came twice or out of turn, so a call may instead hold arguments that do not
    parse (and be answered with an error)."""

    text: str
    calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    exact: bool = True


class Chaos(Scripted):
    """The provider: answers each request with a fault or a clean answer, at random, and
    notes each reply it sent whole before the first byte of it goes out."""

    def __init__(self, wire: Wire, rng: random.Random) -> None:
        self.wire = wire
        self.api: ModuleType = provider_stub if wire == "openai" else anthropic_stub
        self.rng = rng
        self.clean = False  # set between turns: this turn's answers are all clean
        self.sent: list[Expected] = []
        self.faults: Counter[str] = Counter()  # answers by kind
        self.details: Counter[str] = Counter()  # and by what exactly was sent
        self.log: list[str] = []  # each answer, as a violation names it
        self.after_results = 0  # faults that hit a request carrying tool results
        self.stub_bugs: list[str] = []

    def serve(self, exchange: Exchange) -> None:
        try:
            self.answer(exchange)
        except (BrokenPipeError, ConnectionResetError, HangUp):
            raise
        except Exception as exc:  # the campaign's own bug: report it, never hide it
            self.stub_bugs.append(f"the chaos stub failed: {exc!r}")
            raise

    def answer(self, exchange: Exchange) -> None:
        rng, api = self.rng, self.api
        rounds = replies_since_prompt(exchange.body.get("messages", []))
        kinds = [k for k in FAULTS if rounds < MAX_ROUNDS or k not in NEEDS_CALLS]
        kind = "clean" if self.clean else rng.choices(kinds, [FAULTS[k] for k in kinds])[0]
        self.faults[kind] += 1
        self.after_results += kind != "clean" and rounds > 0
        with_calls = kind in NEEDS_CALLS or (rounds < MAX_ROUNDS - 1 and rng.random() < 0.5)
        made = tuple(rng.sample(READS, rng.randint(2 if kind in NEEDS_CALLS else 1, 3)))
        text = rng.choice(("", "Let me look. ")) if with_calls else rng.choice(WORDS)
        expected = Expected(text, made if with_calls else ())
        reply = api.tool_calls(*made, text=text) if with_calls else api.text(text, chunk_size=8)
        shape = "+".join(name for name, _ in made) if with_calls else "text"
        match kind:
            case "clean":
                self.send(exchange, reply, f"clean {shape}", expected)
            case "stall short" | "stall long":
                seconds = SHORT_STALL_S if kind == "stall short" else LONG_STALL_S
                after = rng.randrange(3)
                stalled = stub_faults.stall(seconds, reply, after)
                made_whole = expected if kind == "stall short" else None
                self.send(exchange, stalled, f"{kind} after {after} events of {shape}", made_whole)
            case "drop at byte":
                whole = exchange.rendered(reply)
                at = rng.randrange(len(whole))
                self.note(f"{shape} dropped at byte {at} of {len(whole)}")
                if TERMINAL[self.wire] in whole[:at]:
                    self.sent.append(expected)  # the reply was whole before the cut
                exchange.write_raw(whole[:at])
                raise HangUp
            case "hang up":
                self.send(exchange, api.hang_up(), kind)
            case "not http":
                raw = rng.choice(NOT_HTTP)
                self.send(exchange, stub_faults.not_http(raw), f"not http: {raw[:20]!r}")
            case "garbage":
                what, raw, whole_text = rng.choice(GARBAGE[self.wire])
                made_whole = None if whole_text is None else Expected(whole_text)
                self.send(exchange, stub_faults.raw_stream(raw), f"garbage: {what}", made_whole)
            case "retryable error":
                status = rng.choice((429, 500, 502, 503, 504, 529))
                if rng.random() < 0.25:
                    body = rng.choice(ODD_ERROR_BODIES)
                    said = f"{status} with the body {body[:20]!r}"
                    self.send(exchange, stub_faults.raw_error(status, body), said)
                    return
                wait = rng.choice(RETRY_AFTER)
                said = "Retry-After " + ("none" if wait is None else str(wait))
                self.send(
                    exchange, api.error(status, "busy", retry_after=wait), f"{status}: {said}"
                )
            case "final error":
                status = rng.choice((400, 401, 403, 404))
                self.send(exchange, api.error(status, "the request was refused"), f"{status}")
            case "error event":
                kind_said = rng.choice(
                    [("server_error", "The server had an error processing your request.")]
                    if self.wire == "openai"
                    else [("overloaded_error", "Overloaded"), ("invalid_request_error", "too long")]
                )
                self.send(exchange, api.error_event(*kind_said), f"error event {kind_said[0]}")
            case "cut in call":
                self.send(exchange, api.cut_off_in_tool_call(*made, text=text), f"{kind} {shape}")
            case "duplicated delta" | "reordered deltas":
                layout = api.call_deltas(*made)
                order, how = perturbed(rng, layout, duplicate=kind == "duplicated delta")
                exact = Expected(text, made, exact=whole_again(layout, order))
                said = f"{shape} with {how} {order}"
                self.send(exchange, api.tool_calls(*made, text=text, order=order), said, exact)

    def note(self, detail: str) -> None:
        self.details[detail] += 1
        self.log.append(detail)

    def send(
        self, exchange: Exchange, reply: Scripted, detail: str, whole: Expected | None = None
    ) -> None:
        self.note(detail)
        if whole is not None:
            self.sent.append(whole)
        reply.serve(exchange)


def replies_since_prompt(messages: list[dict[str, Any]]) -> int:
    """The replies of this turn so far: assistant messages after the person's prompt."""
    for at in range(len(messages) - 1, -1, -1):
        if messages[at].get("role") == "user" and "chaos turn" in json.dumps(
            messages[at].get("content")
        ):
            return sum(1 for m in messages[at + 1 :] if m.get("role") == "assistant")
    return 0


def perturbed(
    rng: random.Random, layout: list[Delta], *, duplicate: bool
) -> tuple[tuple[int, ...], str]:
    """An order of a reply's tool-call deltas: one sent twice, or some out of turn."""
    n = len(layout)
    if duplicate:
        at = rng.randrange(n)
        return (*range(at + 1), at, *range(at + 1, n)), f"duplicated {layout[at].kind}"
    how = rng.choice(("calls interleaved", "head after arguments", "pieces swapped", "shuffled"))
    order = list(range(n))
    heads = [at for at, d in enumerate(layout) if d.kind == "head"]
    if how == "calls interleaved":
        queues = [
            deque(at for at, d in enumerate(layout) if d.call == c) for c in range(len(heads))
        ]
        order = []
        while any(queues):
            order.append(rng.choice([q for q in queues if q]).popleft())
    elif how == "head after arguments":
        head = rng.choice(heads)
        order[head], order[head + 1] = order[head + 1], order[head]
    elif how == "pieces swapped":
        pairs = [at for at in range(n - 1) if layout[at].kind == layout[at + 1].kind == "arguments"
                 and layout[at].call == layout[at + 1].call]  # fmt: skip
        if pairs:
            at = rng.choice(pairs)
            order[at], order[at + 1] = order[at + 1], order[at]
    else:
        rng.shuffle(order)
    return tuple(order), how


def whole_again(layout: list[Delta], order: tuple[int, ...]) -> bool:
    """Whether a reader can rebuild every call from ``order``: each call's argument
    pieces arrive once and in order (heads and stops may come anywhere, or twice)."""
    for call in {d.call for d in layout}:
        pieces = [
            layout[at].piece
            for at in order
            if layout[at].call == call and layout[at].kind == "arguments"
        ]
        wanted = [d.piece for d in layout if d.call == call and d.kind == "arguments"]
        if pieces != wanted:
            return False
    return True


class Chaotic:
    """One wire format's run: the stub, the service, and the checks after each turn."""

    def __init__(self, seed: int, turns: int, wire: Wire, root: Path) -> None:
        self.turns = turns
        self.wire = wire
        self.root = root
        self.report = Report(f"provider chaos ({wire})", seed)
        self.chaos = Chaos(wire, random.Random(f"{seed}:{wire}"))
        self.statuses: Counter[str] = Counter()
        self.reasons: Counter[str] = Counter()
        self.requests = self.stored = self.answered = 0

    async def run(self) -> Report:
        started = time.perf_counter()
        tether_log, watch = logging.getLogger("tether"), Watch()
        tether_log.addHandler(watch)
        tether_log.propagate = False  # hundreds of retries: counted, not printed
        with stub_for(self.wire) as stub:
            stub.script(*[self.chaos] * (self.turns * 4 * MAX_ROUNDS + 10))
            service = self.service(stub)
            try:
                session: str | None = None
                for turn in range(self.turns):
                    if turn % TURNS_PER_SESSION == 0:
                        session = None
                    session = await self.turn(turn, service, stub, session)
            finally:
                await service.shutdown()
                tether_log.removeHandler(watch)
                tether_log.propagate = True
        self.report.violations += self.chaos.stub_bugs + watch.failures
        self.report.figures |= {
            "turns": self.turns,
            "requests": self.requests,
            "retries": watch.retries,
            "statuses": tally(self.statuses),
            "answers": tally(self.chaos.faults),
            "faults after tool results": self.chaos.after_results,
            "error reasons": tally(self.reasons),
            "replies stored": self.stored,
            "calls answered": self.answered,
            "duration": f"{time.perf_counter() - started:.1f} s",
        }
        return self.report

    def service(self, stub: LoopbackStub) -> Service:
        workspace = self.root / "ws"
        workspace.mkdir(parents=True, exist_ok=True)
        (workspace / "notes.txt").write_text("line one\nline two\n")
        (workspace / "code.py").write_text("def f():\n    return 1\n\nclass C:\n    pass\n")
        provider = {
            "kind": self.wire, "base_url": stub.url, "model": "chaos-model",
            "api_key": "sk-chaos-3f9a61c2d7b84e05", "max_retries": 2, "retry_base_s": 0.01,
            "retry_max_s": 0.05, "timeout_s": TIMEOUT_S, "connect_timeout_s": 2,
        }  # fmt: skip
        config = Configuration({})
        layer = {"state_dir": str(self.root / "state"), "provider": provider}
        if (problem := config.set_layer("chaos", layer)) is not None:
            raise problem
        return app.build(config, workspace, NoDocuments(), Nobody(), NoEditor())

    async def turn(
        self, turn: int, service: Service, stub: LoopbackStub, session: str | None
    ) -> str:
        prompt = f"chaos turn {turn}: what is in notes.txt?"
        session = service.open(prompt, session)
        clean = turn % CLEAN_EVERY == CLEAN_EVERY - 1
        self.chaos.clean = clean
        stored_before = len(replies(service, session))
        sent_before, asked_before = len(self.chaos.sent), len(stub.requests)
        log_before = len(self.chaos.log)

        ended = "not yet"

        def violate(turn: int, what: str) -> None:
            answers = "; ".join(self.chaos.log[log_before:])
            said = f"session {session}, ended {ended}, answers: {answers}"
            self.report.violate(turn, f"{what} [{said}]")

        try:
            run = service.run(session, prompt, NoUpdates())
            result = await asyncio.wait_for(run, TURN_LIMIT_S)
        except TimeoutError:
            violate(turn, f"the turn did not end within {TURN_LIMIT_S:g} s")
            return session
        status = result.status
        ended = status if result.error is None else f"{status}: {result.error[:200]}"
        self.statuses[status] += 1
        if status not in get_args(TurnStatus):
            violate(turn, f"status {status!r} is not the contract's")
        elif status not in ("done", "error") or (clean and status != "done"):
            violate(turn, f"a {'clean ' if clean else ''}turn ended {status}: {result.error}")
        if status == "error":
            self.reasons[reason_kind(result.error or "")] += 1
            if (problem := unclear(result.error, where(stub))) is not None:
                violate(turn, problem)
            stalled = any(a.startswith("stall long") for a in self.chaos.log[log_before:])
            if reason_kind(result.error or "") == "went" and not stalled:
                violate(turn, "a timeout no long stall caused (was the machine paused?)")
        if (kept := service.store.sessions.get(session).status) != status:
            violate(turn, f"the turn ended {status} but its session says {kept}")
        history = service.history(session).model_dump(mode="json")
        for problem in check_history(history, parked=False):
            violate(turn, f"session {session}: {problem}")
        results = {m["call_id"]: m["status"] for m in history["messages"] if m["role"] == "tool"}
        got = [m for m in history["messages"] if m["role"] == "assistant"][stored_before:]
        self.stored += len(got)
        self.answered += sum(len(m.get("tool_calls") or []) for m in got)
        for problem in kept_as_sent(got, self.chaos.sent[sent_before:], results):
            violate(turn, problem)
        if status == "done" and (not got or result.answer != got[-1]["content"]):
            violate(turn, f"the turn answered {result.answer!r}, not its last reply")
        asked = stub.requests[asked_before:]
        self.requests += len(asked)
        for body in asked:
            for problem in check_request(body, self.wire):
                violate(turn, f"request: {problem}")
        return session


class Watch(logging.Handler):
    """Counts the providers' retries; keeps what was logged as a failure."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.retries = 0
        self.failures: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name == "tether.providers.retry" and "retrying" in record.getMessage():
            self.retries += 1
        elif record.levelno >= logging.ERROR:
            failed = record.exc_info[1] if record.exc_info else None
            self.failures.append(f"logged: {record.getMessage()}: {failed!r}")


def replies(service: Service, session: str) -> list[Any]:
    return [m for m in service.history(session).messages if m.role == "assistant"]


def kept_as_sent(
    got: list[dict[str, Any]], sent: list[Expected], results: dict[str, str]
) -> list[str]:
    """What differs between the replies stored in a turn and the replies the stub sent
    whole: none stored from a reply that failed, none lost, none changed."""
    if len(got) != len(sent):
        shown = [m["content"][:30] for m in got], [s.text[:30] for s in sent]
        return [f"{len(got)} replies stored {shown[0]}, the stub sent {len(sent)} whole {shown[1]}"]
    problems = []
    for stored, whole in zip(got, sent, strict=True):
        calls = stored.get("tool_calls") or []
        if stored["content"] != whole.text:
            problems.append(f"reply stored as {stored['content']!r}, sent {whole.text!r}")
        if [c["name"] for c in calls] != [name for name, _ in whole.calls]:
            problems.append(f"calls stored {[c['name'] for c in calls]}, sent {whole.calls}")
            continue
        for call, (name, arguments) in zip(calls, whole.calls, strict=True):
            if call["arguments"] == arguments:
                continue
            if whole.exact or not isinstance(call["arguments"], str):
                problems.append(
                    f"{name} {call['id']} stored with {call['arguments']!r}, sent {arguments}"
                )
            elif results.get(call["id"]) == "ok":
                problems.append(f"{name} {call['id']} ran on arguments that do not parse")
    return problems


def where(stub: LoopbackStub) -> str:
    """The provider's host and port, as every error reason names it."""
    return stub.url.split("//", 1)[1].split("/", 1)[0]


def unclear(reason: str | None, provider: str) -> str | None:
    """Why ``reason`` is not one a person can act on, or None when it is."""
    if not reason or not reason.strip():
        return "an error without a reason"
    if NOT_WORDS.search(reason):
        return f"a reason that is a Python error, not words: {reason[:300]!r}"
    if provider not in reason:
        return f"a reason that does not name the provider at {provider}: {reason[:300]!r}"
    if len(reason) > 2000:
        return f"a reason of {len(reason)} characters"
    return None


def reason_kind(reason: str) -> str:
    return next((kind for kind, phrase in REASON_KINDS if phrase in reason), "other")


def tally(counts: Counter[str]) -> str:
    return " / ".join(f"{kind} {n}" for kind, n in sorted(counts.items(), key=lambda kv: -kv[1]))


async def campaign(seed: int, turns: int, root: Path) -> list[Report]:
    reports = []
    for wire in ("openai", "anthropic"):
        where_to = root / wire
        where_to.mkdir(parents=True, exist_ok=True)
        reports.append(await Chaotic(seed, turns, wire, where_to).run())
    return reports
