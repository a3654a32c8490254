"""LSP fuzz: generated hostile messages against real ``tether serve`` processes, in bytes.

Every message comes from the seed (``random.Random``: a seed replays the same bytes).
Kinds: bad framing (header blocks without one valid length, bodies cut short or run
long, not JSON, not UTF-8, nested too deep, over the size limit, valid frames in odd
spellings or written in pieces), bad JSON-RPC (not an object, no ``jsonrpc``, a method
that is no string, ids of every JSON type, one id twice), wrong types, huge strings and
out-of-range positions in the params of what tether serves, unknown methods and
commands, notifications sent with an id, responses nobody asked for, and
``$/cancelRequest`` interleaved with the requests it names.

Most messages go to one server that lives through the whole campaign: its memory is
read at the start, over the run's steady first part and at its peak, and a turn runs on
it now and then (every other one cancelled as it starts). The lifecycle goes to
short-lived servers, each started once the one before has ended: messages before
``initialize``, a second ``initialize``, a turn as ``shutdown`` comes, requests after
``shutdown``, ``exit`` with and without ``shutdown``, a hang-up, a terabyte's length.

Each message gets its own check: a request (an id, valid or not) is answered exactly
once, with a result or a JSON-RPC error carrying its id (null for a frame that could
not be read or an id that is no integer or string), with the answer LSP prescribes
where it prescribes one (-32002 before ``initialize``, -32600 after ``shutdown``, ...),
and never with an internal error; nothing answers a notification or a response. After
each batch a well-formed request (``tether.sessions``) still gets its result, the
server still runs (or ended with the code its ``exit`` calls for), and its memory stays
under the bounds below.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import sys
from collections import Counter
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e.test_hostile_lsp import RawClient, framed, spawn, stop
from tests.reliability.harness import Report, answering, env_for, text
from tests.support.loopback import LoopbackStub, Scripted
from tether.lsp.framing import MAX_MESSAGE_BYTES, Frames, Rejected

MiB = 2**20
HUGE = (64 * 1024, 256 * 1024, MiB, 4 * MiB)  # the sizes of a huge string, in JSON bytes
BATCH = (20, 60)  # messages written before the next check
ANSWER_S = 30.0  # the longest wait for a batch's answers (a 64 MiB body included)
EPISODE_EVERY = 1_000  # messages per short-lived server
TURN_EVERY = 2_000  # messages between two turns on the long-lived server
OVERSIZED_EVERY = 5_000  # messages per body over MAX_MESSAGE_BYTES (each sends 64 MiB)
# Memory. At its peak the server holds a few copies of the largest message at once: the
# bytes read, the text, its JSON values (up to 4 bytes a character where the body spent
# one), an error that quotes it, the answer's JSON and its bytes. Fewer than 16 copies of
# the largest body, and the allocator's slack, bound the peak above the start.
PEAK_COPIES, PEAK_SLACK_MIB = 16, 64
# Nothing a message leaves behind may pile up. The first part of the run ("steady") has
# every kind but huge strings and bodies over the limit (the heap the allocator keeps
# after those would take in what piles up, unseen); from the end of its warm-up (a fifth
# of it) to its end the resident size may grow by the slack of a heap in use and a little
# a message: far less than the 2 KB each notification left behind before the fix in
# ``lsp/pygls_private.py`` (the long run's 24,000 steady messages would have grown 10+ MiB).
STEADY = 0.3
GROWTH_SLACK_MIB, GROWTH_PER_MESSAGE = 4, 200  # bytes


def growth_bound_mib(messages: int) -> float:
    return GROWTH_SLACK_MIB + GROWTH_PER_MESSAGE * messages / MiB


ENDS = ("shutdown-exit", "exit", "shutdown-hang-up", "terabyte", "hang-up")
RESULT = "result"
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
INTERNAL_ERROR, NOT_INITIALIZED, REQUEST_CANCELLED = -32603, -32002, -32800
Outcome = str | int  # RESULT or an error code
ANY: AbstractSet[Outcome] | None = None  # a result or any error (never an internal one)


@dataclass
class Expect:
    """One answer a message calls for: its id (as JSON) and what it may be."""

    key: str
    allowed: AbstractSet[Outcome] | None


@dataclass
class Sent:
    """One generated message: its bytes (several writes for ``pieces``), what answers it."""

    kind: str
    pieces: list[bytes]
    expects: list[Expect] = field(default_factory=list)
    oversized: int = 0  # bytes of filler that follow (a body over the limit)

    def shown(self) -> str:
        data = b"".join(self.pieces)
        head = data[:240].decode(errors="replace")
        return f"{self.kind}: {head!r}" + (f"… ({len(data)} bytes)" if len(data) > 240 else "")


def key(msg_id: Any) -> str:
    return json.dumps(msg_id, sort_keys=True)


def body(value: Any, ascii_only: bool = True) -> bytes:
    """``value`` as JSON in UTF-8; other than ASCII only if asked (and no lone surrogate
    stands in the way: UTF-8 has none)."""
    try:
        return json.dumps(value, ensure_ascii=ascii_only).encode()
    except UnicodeEncodeError:
        return json.dumps(value).encode()


# -- generators ---------------------------------------------------------------------------

ODD_STRINGS = (
    "",
    " ",
    "a",
    "é中🙂",
    "\u0000",
    "\ud83d",
    "\u202e",
    "null",
    "0",
    "-1",
    "../../etc/passwd",
    "file:///etc/passwd",
    "$(touch pwned)",
    "%s%n",
    "\\",
    '"',
    "tether.run",
    "x" * 5000,
)
LSP_REQUESTS_NOT_SERVED = (
    "textDocument/hover",
    "textDocument/completion",
    "textDocument/definition",
    "workspace/symbol",
    "textDocument/formatting",
    "completionItem/resolve",
    "textDocument/semanticTokens/full",
    "workspace/willRenameFiles",
    "$/unknownRequest",
)
NOTIFICATIONS = (
    "initialized",
    "exit",
    "$/cancelRequest",
    "$/setTrace",
    "$/progress",
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "workspace/didChangeConfiguration",
    "workspace/didChangeWorkspaceFolders",
    "window/workDoneProgress/cancel",
)
COMMANDS = (
    "tether.run",
    "tether.cancel",
    "tether.approve",
    "tether.deny",
    "tether.sessions",
    "tether.history",
    "tether.schedule",
    "tether.unschedule",
    "tether.tasks",
    "tether.applied",
    "tether.rules",
    "tether.forget",
    "tether.planned",
)
BAD_IDS: tuple[Any, ...] = (
    True,
    False,
    None,
    1.5,
    -0.0,
    1.0,
    1e300,
    float("nan"),
    float("inf"),
    [],
    [1],
    {},
    {"id": 1},
)
ODD_IDS: tuple[Any, ...] = (
    0,
    -1,
    -(2**63),
    2**53 + 1,
    2**63,
    2**70,
    "",
    "🙂",
    "null",
    "0",
    " ",
    "\u0000",
    "x" * 10_000,
)
BAD_HEADERS = (
    b"Content-Length: banana\r\n\r\n",
    b"Content-Length: -5\r\n\r\n",
    b"Content-Length: 1.5\r\n\r\n",
    b"Content-Type: application/json\r\n\r\n",
    b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n",
    b"no colon here\r\n\r\n",
    b": empty name\r\nContent-Length: 2\r\n\r\n",
    b"X-Long: " + b"x" * (MAX_MESSAGE_BYTES // 16) + b"\r\n\r\n",
)
NOT_JSON = (
    b"{this is not json",
    b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"',
    b"\xff\xfe\x00not utf-8",
    b'{"jsonrpc": "2.0", "id": "\xed\xa0\xbd", "method": "x"}',  # a surrogate, in UTF-8
    b"\xef\xbb\xbf{}",  # a byte-order mark
    b"[" * 100_000,
    b'{"a": ' * 5_000 + b"1" + b"}" * 5_000,
    b"",
    b"   ",
    b'{"jsonrpc": "2.0", "id": ' + b"9" * 5_000 + b', "method": "x"}',  # too many digits
    b"{'single': 'quotes'}",
    b'{"jsonrpc": "2.0"} trailing',
)


class Generator:
    """The seeded source of every message."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.ids = 0
        # The documents' names do not depend on where the run is (the bytes a seed makes
        # are the same anywhere); what a document is, is what the client says it is.
        self.documents = [f"file:///fuzz/ws/doc{n}.txt" for n in range(12)] + [
            "untitled:Untitled-1",
            "file:///tmp/x%00y.py",
            "not a uri",
            "file:///",
            "",
        ]
        self.huge_document = "file:///fuzz/ws/huge.txt"

    # -- values

    def next_id(self) -> int | str:
        self.ids += 1
        return self.ids if self.ids % 2 else f"m{self.ids}"

    def string(self) -> str:
        rng = self.rng
        if rng.random() < 0.5:
            return rng.choice(ODD_STRINGS)
        alphabet = "abcxyz019 _-./\\\"'{}[]é中🙂\u0000\t\n\u2028"
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 40)))

    def huge(self) -> str:
        """A string that takes one of the ``HUGE`` sizes as JSON (ASCII, escapes and all)."""
        size = self.rng.choice(HUGE)
        unit = self.rng.choice(("x", "é", "中", "🙂", "\\", "\u0000"))
        return unit * (size // len(json.dumps(unit)[1:-1]))

    def junk(self, depth: int = 0) -> Any:
        rng = self.rng
        pick = rng.randrange(9 if depth < 3 else 6)
        if pick == 0:
            return None
        if pick == 1:
            return rng.choice((True, False))
        if pick == 2:
            return rng.choice((0, -1, 1, 2**31, 2**63, 2**70, -(2**40)))
        if pick == 3:
            return rng.choice((0.5, -1e308, 1e-300, 3.0))
        if pick in (4, 5):
            return self.string()
        if pick in (6, 7):
            return [self.junk(depth + 1) for _ in range(rng.randint(0, 4))]
        return {self.string(): self.junk(depth + 1) for _ in range(rng.randint(0, 4))}

    def number(self) -> Any:
        """A position's line or character: often valid, often not."""
        return self.rng.choice(
            (0, 1, 3, 10**6, 2**31 - 1, 2**31, 2**53, 2**64, -1, -(2**31), 1.5, "3", None, [])
        )

    def position(self, odd: bool) -> dict[str, Any]:
        if not odd:
            return {"line": self.rng.randint(0, 3), "character": self.rng.randint(0, 5)}
        return {"line": self.number(), "character": self.number()}

    def range(self, odd: bool) -> dict[str, Any]:
        return {"start": self.position(odd), "end": self.position(odd)}

    def document(self) -> str:
        return self.rng.choice(self.documents)

    def mutated(self, value: Any) -> Any:
        """``value`` with one part replaced by junk, dropped, or left as it is."""
        rng = self.rng
        if not isinstance(value, dict) or not value or rng.random() < 0.2:
            return self.junk()
        copy = dict(value)
        name = rng.choice(sorted(copy))
        match rng.randrange(3):
            case 0:
                del copy[name]
            case 1:
                copy[name] = self.mutated(copy[name])
            case _:
                copy[self.string()] = self.junk()
        return copy

    # -- messages

    def message(self, kind: str, value: Any, *expects: Expect) -> Sent:
        return Sent(kind, [framed(body(value))], list(expects))

    def request(
        self,
        kind: str,
        method: Any,
        params: Any,
        allowed: AbstractSet[Outcome] | None = ANY,
        msg_id: Any = None,
    ) -> Sent:
        msg_id = self.next_id() if msg_id is None else msg_id
        value = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}
        return self.message(kind, value, Expect(key(msg_id), allowed))

    def notification(self, kind: str, method: Any, params: Any) -> Sent:
        return self.message(kind, {"jsonrpc": "2.0", "method": method, "params": params})

    def command(self, name: str, *arguments: Any) -> dict[str, Any]:
        return {"command": name, "arguments": list(arguments)}

    def code_action(self, odd: bool) -> dict[str, Any]:
        return {
            "textDocument": {"uri": self.document()},
            "range": self.range(odd),
            "context": {"diagnostics": []},
        }

    def init_params(self, workspace: Path) -> dict[str, Any]:
        return {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}


def valid_request(gen: Generator, kind: str = "valid-request") -> Sent:
    """A request of what tether serves, well formed; its answer is known."""
    rng = gen.rng
    match rng.randrange(6):
        case 0 | 1:
            name = rng.choice(("tether.sessions", "tether.tasks", "tether.rules"))
            return gen.request(kind, "workspace/executeCommand", gen.command(name, {}), {RESULT})
        case 2:
            session = {"session": f"{rng.getrandbits(48):012x}"}
            history = gen.command("tether.history", session)
            return gen.request(kind, "workspace/executeCommand", history, {INVALID_PARAMS})
        case 3:
            cancel = gen.command("tether.cancel", {"session": gen.string()})
            return gen.request(kind, "workspace/executeCommand", cancel, {INVALID_PARAMS})
        case _:
            return gen.request(kind, "textDocument/codeAction", gen.code_action(False), {RESULT})


def checked(gen: Generator) -> list[Sent]:
    return [valid_request(gen)]


def unknown_method(gen: Generator) -> list[Sent]:
    method = gen.rng.choice((*LSP_REQUESTS_NOT_SERVED, gen.string()))
    if method in NOTIFICATIONS:
        method = "textDocument/hover"
    # pygls reads the params of a method LSP defines before it finds no handler for it
    allowed = {METHOD_NOT_FOUND, INVALID_PARAMS}
    return [gen.request("unknown-method", method, gen.junk(), allowed)]


def unknown_command(gen: Generator) -> list[Sent]:
    name = gen.string()
    params = gen.command(name if name not in COMMANDS else "tether.nope", gen.junk())
    return [gen.request("unknown-command", "workspace/executeCommand", params, {INVALID_PARAMS})]


def wrong_params(gen: Generator) -> list[Sent]:
    """A method tether serves, its params with a wrong type, a part missing or extra."""
    rng = gen.rng
    if rng.random() < 0.3:
        action = gen.mutated(gen.code_action(rng.random() < 0.5))
        return [gen.request("wrong-params", "textDocument/codeAction", action)]
    name = rng.choice(COMMANDS)
    argument: Any = {"session": gen.string(), "calls": [gen.string()], "rule": gen.string()}
    if name in ("tether.run", "tether.schedule"):  # never a valid one: no turn, no task
        bad = {"prompt": rng.choice((None, "", 5, [gen.string()])), "every": "1d"}
        arguments: Any = rng.choice(([bad], [bad, gen.junk()], []))
        return [
            gen.request("wrong-params", "workspace/executeCommand", gen.command(name, *arguments))
        ]
    argument = gen.mutated(argument) if rng.random() < 0.7 else argument
    arguments = rng.choice(([argument], [argument, gen.junk()], [], gen.junk()))
    params: Any = {"command": name, "arguments": arguments}
    if rng.random() < 0.2:
        params = gen.mutated(params)
    return [gen.request("wrong-params", "workspace/executeCommand", params)]


def huge(gen: Generator) -> list[Sent]:
    """A huge string where one may stand: an id, a method, a command, an argument, a URI,
    a document's text."""
    rng = gen.rng
    big = gen.huge()
    sessions = gen.command("tether.sessions", {})
    match rng.randrange(6):
        case 0:
            return [gen.request("huge", "workspace/executeCommand", sessions, {RESULT}, big)]
        case 1:
            return [gen.request("huge", big, {}, {METHOD_NOT_FOUND})]
        case 2:
            params = gen.command(big, {})
            return [gen.request("huge", "workspace/executeCommand", params, {INVALID_PARAMS})]
        case 3:
            params = gen.command(rng.choice(("tether.history", "tether.cancel")), {"session": big})
            return [gen.request("huge", "workspace/executeCommand", params)]
        case 4:
            action = gen.code_action(False) | {"textDocument": {"uri": "file:///" + big}}
            return [gen.request("huge", "textDocument/codeAction", action)]
        case _:  # one document only: what the client keeps open, the server keeps
            document = {"uri": gen.huge_document, "languageId": "text", "version": 1, "text": big}
            return [gen.notification("huge", "textDocument/didOpen", {"textDocument": document})]


def bad_jsonrpc(gen: Generator) -> list[Sent]:
    rng = gen.rng
    value: dict[str, Any] = {"method": "workspace/executeCommand"}
    value["params"] = gen.command("tether.sessions", {})
    version: Any = rng.choice((None, "1.0", 2.0, "2", "2.0 ", []))
    if version is not None:
        value["jsonrpc"] = version
    answered = key(None)
    if rng.random() < 0.7:
        value["id"] = msg_id = gen.next_id()
        answered = key(msg_id)
    return [gen.message("bad-jsonrpc", value, Expect(answered, {INVALID_REQUEST}))]


def bad_method(gen: Generator) -> list[Sent]:
    rng = gen.rng
    value: dict[str, Any] = {"jsonrpc": "2.0", "method": rng.choice((5, None, [], {}, True))}
    answered = key(None)
    if rng.random() < 0.7:
        value["id"] = msg_id = gen.next_id()
        answered = key(msg_id)
    return [gen.message("bad-method", value, Expect(answered, {INVALID_REQUEST}))]


def bad_id(gen: Generator) -> list[Sent]:
    """An id that is no integer or string: answered -32600 with id null."""
    rng = gen.rng
    method = rng.choice(("workspace/executeCommand", "textDocument/hover", gen.string()))
    value = {"jsonrpc": "2.0", "id": rng.choice(BAD_IDS), "method": method, "params": {}}
    return [gen.message("bad-id", value, Expect(key(None), {INVALID_REQUEST}))]


def odd_id(gen: Generator) -> list[Sent]:
    """A valid id of an unusual value: answered with exactly that id."""
    msg_id = gen.rng.choice(ODD_IDS)
    sessions = gen.command("tether.sessions", {})
    return [gen.request("odd-id", "workspace/executeCommand", sessions, {RESULT}, msg_id)]


def duplicate_id(gen: Generator) -> list[Sent]:
    msg_id = gen.next_id()
    sessions = gen.command("tether.sessions", {})
    return [
        gen.request("duplicate-id", "workspace/executeCommand", sessions, {RESULT}, msg_id)
        for _ in range(gen.rng.randint(2, 3))
    ]


def notification_with_id(gen: Generator) -> list[Sent]:
    """A notification's method sent as a request: refused with its id, not carried out."""
    method = gen.rng.choice(NOTIFICATIONS)
    params = gen.junk() if gen.rng.random() < 0.5 else {}
    return [gen.request("notification-with-id", method, params, {INVALID_REQUEST})]


def notification(gen: Generator) -> list[Sent]:
    """A notification, well formed or not: nothing answers it."""
    rng = gen.rng
    uri = gen.document()
    text_ = gen.string() * rng.randint(1, 20)
    choices: list[tuple[str, Any]] = [
        (
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "text", "version": 1, "text": text_}},
        ),
        (
            "textDocument/didChange",
            {
                "textDocument": {"uri": uri, "version": rng.randint(-1, 2**31)},
                "contentChanges": [
                    rng.choice(({"text": text_}, {"range": gen.range(False), "text": text_[:40]}))
                ],
            },
        ),
        ("textDocument/didClose", {"textDocument": {"uri": uri}}),
        ("textDocument/didSave", {"textDocument": {"uri": uri}}),
        ("workspace/didChangeConfiguration", {"settings": gen.junk()}),
        ("$/setTrace", {"value": rng.choice(("off", "messages", "verbose", gen.string()))}),
        ("window/workDoneProgress/cancel", {"token": gen.junk()}),
        ("$/progress", {"token": gen.string(), "value": gen.junk()}),
        ("initialized", {}),
        (rng.choice(("$/unknownThing", "foo/bar", gen.string())), gen.junk()),
        # a request's method without an id: a notification nobody serves
        ("workspace/executeCommand", gen.command("tether.sessions", {})),
        ("textDocument/codeAction", gen.code_action(False)),
    ]
    method, params = rng.choice(choices)
    if method == "exit" or (rng.random() < 0.3 and method != "textDocument/didOpen"):
        params = gen.mutated(params)
    if method == "exit":
        method = "$/notExit"
    return [gen.notification("notification", method, params)]


def response(gen: Generator) -> list[Sent]:
    """A response nobody asked for: nothing answers it."""
    rng = gen.rng
    msg_id = rng.choice((gen.next_id(), rng.choice(BAD_IDS)))
    value: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
    match rng.randrange(3):
        case 0:
            value["result"] = gen.junk()
        case 1:
            value["error"] = {"code": rng.choice((-32601, 1, -32800)), "message": gen.string()}
        case _:
            value["error"] = gen.junk()
    return [gen.message("response", value)]


def not_a_message(gen: Generator) -> list[Sent]:
    """JSON that is no JSON-RPC message at all: answered -32600 with id null."""
    value = gen.rng.choice(
        (
            [],
            [{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}],  # a batch: not in LSP
            "text",
            5,
            None,
            {},
            {"jsonrpc": "2.0"},
            {"jsonrpc": "2.0", "params": {}},
            {"jsonrpc": "2.0", "result": None},
        )
    )
    return [gen.message("not-a-message", value, Expect(key(None), {INVALID_REQUEST}))]


def cancel(gen: Generator, batch: list[Sent]) -> list[Sent]:
    """``$/cancelRequest`` for a request of this batch (which then may answer -32800), an
    unknown one, or with params that are not a cancel's."""
    rng = gen.rng
    targets = [s for s in batch if s.expects and s.expects[0].key != key(None)]
    if targets and rng.random() < 0.6:
        params: Any = {"id": json.loads(rng.choice(targets).expects[-1].key)}
    else:
        params = rng.choice(({"id": gen.next_id()}, {"id": gen.junk()}, gen.junk()))
    named = params.get("id") if isinstance(params, dict) else None
    if isinstance(named, int | str) and not isinstance(named, bool):
        for expect in (e for s in batch for e in s.expects if e.key == key(named)):
            if expect.allowed is not None:  # any request of that id may be the one cancelled
                expect.allowed = expect.allowed | {REQUEST_CANCELLED}
    return [gen.notification("cancel", "$/cancelRequest", params)]


def positions(gen: Generator) -> list[Sent]:
    """Positions out of every range, in a request and in an edit of an open document."""
    rng = gen.rng
    if rng.random() < 0.5:
        return [gen.request("positions", "textDocument/codeAction", gen.code_action(True))]
    change = {"range": gen.range(rng.random() < 0.7), "text": gen.string()}
    params = {
        "textDocument": {"uri": gen.document(), "version": rng.randint(0, 100)},
        "contentChanges": [change],
    }
    return [gen.notification("positions", "textDocument/didChange", params)]


def reinitialize(gen: Generator, workspace: Path) -> list[Sent]:
    """A second ``initialize``: refused, the first one stands."""
    return [
        gen.request("reinitialize", "initialize", gen.init_params(workspace), {INVALID_REQUEST})
    ]


def bad_header(gen: Generator) -> list[Sent]:
    """A header block without one valid Content-Length: answered -32600 (id null), no body
    read. A body sent after it anyway runs into the next frame, which is still read."""
    header = gen.rng.choice(BAD_HEADERS)
    bad = Sent("bad-header", [header], [Expect(key(None), {INVALID_REQUEST})])
    if gen.rng.random() < 0.3 and b"Content-Length: 5" not in header:
        bad.pieces.append(b'{"jsonrpc": "2.0", "id": 7, "method": "shutdown"}')
        return [bad, valid_request(gen, "bad-header")]
    return [bad]


def cut_body(gen: Generator) -> list[Sent]:
    """A Content-Length shorter than the body: the part read is no JSON (-32700); the rest
    (at times longer than a header line may be) runs into the next frame, which is still
    read."""
    rng = gen.rng
    if rng.random() < 0.2:
        long = gen.command("tether.cancel", {"session": "x" * rng.randint(5_000, 20_000)})
        whole = gen.request("cut-body", "workspace/executeCommand", long).pieces[0]
        whole = whole.partition(b"\r\n\r\n")[2]
        cut = rng.randint(1, 200)
    else:
        whole = valid_request(gen, "cut-body").pieces[0].partition(b"\r\n\r\n")[2]
        cut = rng.randint(1, len(whole) - 1)
    short = Sent("cut-body", [b"Content-Length: %d\r\n\r\n" % cut + whole])
    short.expects.append(Expect(key(None), {PARSE_ERROR, INVALID_REQUEST}))
    return [short, valid_request(gen, "cut-body")]


def long_body(gen: Generator) -> list[Sent]:
    """A Content-Length longer than the JSON, the rest filled with bytes that are not."""
    whole = valid_request(gen, "long-body").pieces[0].partition(b"\r\n\r\n")[2]
    data = whole + gen.rng.choice((b"x", b"}", b"\x00", b"\n{}")) * gen.rng.randint(1, 50)
    return [Sent("long-body", [framed(data)], [Expect(key(None), {PARSE_ERROR})])]


def not_json(gen: Generator) -> list[Sent]:
    data = gen.rng.choice(NOT_JSON)
    return [Sent("not-json", [framed(data)], [Expect(key(None), {PARSE_ERROR})])]


def spelled(gen: Generator) -> list[Sent]:
    """A valid request in a valid but unusual framing: still read and answered."""
    rng = gen.rng
    sent = valid_request(gen, "spelled")
    data = sent.pieces[0].partition(b"\r\n\r\n")[2]
    if rng.random() < 0.3:  # raw UTF-8 in the body, and in the id the answer carries
        value = json.loads(data)
        value["id"] = msg_id = f"é🙂{gen.next_id()}"
        data = body(value, ascii_only=False)
        sent.expects[0].key = key(msg_id)
    length = rng.choice((b"%d", b"%07d", b"%d  ", b"\t%d")) % len(data)
    name = rng.choice((b"Content-Length", b"content-length", b"CONTENT-LENGTH"))
    end = rng.choice((b"\r\n", b"\n"))
    head = name + rng.choice((b": ", b":", b" : ")) + length + end
    if rng.random() < 0.5:
        extra = b"Content-Type: application/vscode-jsonrpc; charset=utf-8" + end
        head = extra + head if rng.random() < 0.5 else head + extra
    lead = rng.choice((b"", b"\r\n", b"\n\n"))
    sent.pieces = [lead + head + end + data]
    return [sent]


def pieces(gen: Generator) -> list[Sent]:
    """A valid request written in small pieces, cut anywhere (the header included)."""
    sent = valid_request(gen, "pieces")
    data = sent.pieces[0]
    cuts = sorted({gen.rng.randint(1, len(data) - 1) for _ in range(gen.rng.randint(1, 6))})
    sent.pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]
    return [sent]


def oversized(gen: Generator) -> list[Sent]:
    """A body one byte over the limit: refused at once (-32600, id null), then dropped as
    it arrives; the frame after it is read from its first byte."""
    size = MAX_MESSAGE_BYTES + 1
    over = Sent("oversized", [b"Content-Length: %d\r\n\r\n" % size], oversized=size)
    over.expects.append(Expect(key(None), {INVALID_REQUEST}))
    return [over, valid_request(gen, "oversized")]


Kind = tuple[str, float]
KINDS: tuple[Kind, ...] = (
    ("valid-request", 6),
    ("unknown-method", 5),
    ("unknown-command", 3),
    ("wrong-params", 12),
    ("huge", 1.2),
    ("bad-jsonrpc", 3),
    ("bad-method", 2),
    ("bad-id", 5),
    ("odd-id", 3),
    ("duplicate-id", 1.5),
    ("notification-with-id", 4),
    ("notification", 16),
    ("response", 3),
    ("not-a-message", 3),
    ("cancel", 6),
    ("positions", 6),
    ("reinitialize", 0.3),
    ("bad-header", 3),
    ("cut-body", 1.5),
    ("long-body", 1.5),
    ("not-json", 3),
    ("spelled", 3),
    ("pieces", 3),
)


def generate(gen: Generator, kind: str, batch: list[Sent], workspace: Path) -> list[Sent]:
    match kind:
        case "cancel":
            return cancel(gen, batch)
        case "reinitialize":
            return reinitialize(gen, workspace)
        case "oversized":
            return oversized(gen)
    return {
        "valid-request": checked,
        "unknown-method": unknown_method,
        "unknown-command": unknown_command,
        "wrong-params": wrong_params,
        "huge": huge,
        "bad-jsonrpc": bad_jsonrpc,
        "bad-method": bad_method,
        "bad-id": bad_id,
        "odd-id": odd_id,
        "duplicate-id": duplicate_id,
        "notification-with-id": notification_with_id,
        "notification": notification,
        "response": response,
        "not-a-message": not_a_message,
        "positions": positions,
        "bad-header": bad_header,
        "cut-body": cut_body,
        "long-body": long_body,
        "not-json": not_json,
        "spelled": spelled,
        "pieces": pieces,
    }[kind](gen)


# -- one server, spoken to in bytes ---------------------------------------------------------


class Peer:
    """A ``tether serve`` whose output is read as it comes (a pipe left unread would stall
    it): answers are queued for the checks, requests from the server answered null."""

    def __init__(self, client: RawClient) -> None:
        self.client = client
        self.answers: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.lock = asyncio.Lock()  # one frame's pieces are never interleaved
        self.unreadable = 0
        self.reader = asyncio.create_task(self._read())

    @property
    def alive(self) -> bool:
        return self.client.process.returncode is None

    async def _read(self) -> None:
        stdout = self.client.process.stdout
        assert stdout is not None
        frames = Frames(stdout, limit=4 * MAX_MESSAGE_BYTES)
        while (item := await frames.next()) is not None:
            if isinstance(item, Rejected):
                self.unreadable += 1
                continue
            try:
                message = json.loads(item)
            except ValueError:
                self.unreadable += 1
                continue
            if isinstance(message, dict) and "method" in message:
                if "id" in message:  # the server asks: the answer is null
                    null = {"jsonrpc": "2.0", "id": message["id"], "result": None}
                    with contextlib.suppress(ConnectionError):
                        await self.write([framed(body(null))])
                continue
            self.answers.put_nowait(message)

    async def write(self, pieces: list[bytes], filler: int = 0) -> None:
        stdin = self.client.process.stdin
        assert stdin is not None
        async with self.lock:
            for piece in pieces:
                stdin.write(piece)
                if len(pieces) > 1:
                    await stdin.drain()
                    await asyncio.sleep(0.001)
            block = b" " * (4 * MiB)
            while filler > 0:
                stdin.write(block[: min(filler, len(block))])
                filler -= min(filler, len(block))
                await stdin.drain()
            await stdin.drain()

    def memory_mib(self, name: str) -> float | None:
        if sys.platform != "linux" or not self.alive:
            return None
        try:
            return self.client.memory_kib(name) / 1024
        except (OSError, StopIteration):
            return None

    async def close(self) -> None:
        await stop(self.client)
        self.reader.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            await self.reader


def policy(messages: list[dict[str, Any]], system: str, wire: Any) -> Scripted:
    return text(wire, "All is well here. " * 8, delay_s=0.005)


class Fuzz:
    def __init__(self, seed: int, scale: int, root: Path) -> None:
        self.rng = random.Random(seed)
        self.scale = scale
        self.report = Report("lsp fuzz", seed)
        self.workspace = root / "ws"
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.gen = Generator(self.rng)
        self.sent = 0  # messages, the iteration a violation names
        self.kinds: Counter[str] = Counter()
        self.outcomes: Counter[Outcome] = Counter()
        self.requests = 0
        self.answered = 0
        self.checks = 0
        self.servers = 0
        self.exits: Counter[str] = Counter()
        self.turns: Counter[str] = Counter()
        self.peak_mib = 0.0  # of the short-lived servers
        self.largest = 0  # bytes: the largest message sent (a body over the limit aside)
        self.checks_ids = 0

    async def run(self) -> Report:
        with answering("openai", policy) as stub:
            main = await self.start(stub, self.root / "home")
            await self.turn(main)  # the turn's machinery is part of the warm-up
            start_mib = main.memory_mib("VmRSS")
            steady_until = int(self.scale * STEADY)
            warm: tuple[int, float | None] | None = None  # messages sent, RSS
            steady: tuple[int, float | None] | None = None
            next_episode, next_turn = EPISODE_EVERY // 2, TURN_EVERY
            next_oversized = steady_until + 200
            while self.sent < self.scale:
                if self.sent >= next_episode:
                    next_episode += EPISODE_EVERY
                    await self.episode(stub)
                    continue
                if self.sent >= next_turn:
                    next_turn += TURN_EVERY
                    await self.turn(main)
                oversize = self.sent >= next_oversized
                if oversize:
                    next_oversized += OVERSIZED_EVERY
                main = await self.batch(main, stub, oversize, self.sent < steady_until)
                if warm is None and self.sent >= steady_until // 5:
                    warm = self.sent, main.memory_mib("VmRSS")
                if steady is None and self.sent >= steady_until:
                    steady = self.sent, main.memory_mib("VmRSS")
            await self.turn(main)
            peak_mib = main.memory_mib("VmHWM")
            await main.close()
        self.memory(start_mib, peak_mib, warm, steady)
        self.figures()
        return self.report

    async def start(self, stub: LoopbackStub, home: Path, initialize: bool = True) -> Peer:
        self.servers += 1
        client = await spawn(env_for(stub, "openai", home), self.workspace, log_kept=64 * 1024)
        peer = Peer(client)
        if initialize:
            await self.exchange(peer, [self.initialize()])
        return peer

    def initialize(self) -> Sent:
        params = self.gen.init_params(self.workspace)
        return self.gen.request("initialize", "initialize", params, {RESULT})

    async def batch(
        self, peer: Peer, stub: LoopbackStub, oversize: bool = False, steady: bool = False
    ) -> Peer:
        """One batch of generated messages and its checks; a server that died is replaced
        (that is a violation)."""
        items: list[Sent] = []
        size = self.rng.randint(*BATCH)
        if oversize:
            items += oversized(self.gen)
        kinds = [kind for kind in KINDS if not (steady and kind[0] == "huge")]  # see STEADY
        while len(items) < size:
            kind = self.rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
            items += generate(self.gen, kind, items, self.workspace)
        first = self.sent
        await self.exchange(peer, items)
        if not peer.alive:
            code = peer.client.process.returncode
            self.report.violate(first, f"the server ended (code {code}) in this batch")
            await peer.close()
            return await self.start(stub, self.root / "home")
        return peer

    async def exchange(self, peer: Peer, items: list[Sent], checked: bool = True) -> None:
        """Write ``items``, then (``checked``) a well-formed request; every answer due is
        awaited and checked, and nothing else may be answered."""
        due: dict[str, list[tuple[int, Sent, Expect]]] = {}
        for item in items:
            self.kinds[item.kind] += 1
            self.largest = max(self.largest, sum(map(len, item.pieces)))
            for expect in item.expects:
                due.setdefault(expect.key, []).append((self.sent, item, expect))
                self.requests += 1
            self.sent += 1
        check: str | None = None
        if checked:
            self.checks_ids += 1
            check = key(f"check-{self.checks_ids}")
            params = self.gen.command("tether.sessions", {})
            value = {
                "jsonrpc": "2.0",
                "id": json.loads(check),
                "method": "workspace/executeCommand",
            }
            items = [*items, Sent("check", [framed(body(value | {"params": params}))])]
        try:
            for item in items:
                await peer.write(item.pieces, item.oversized)
        except ConnectionError:
            pass  # the server is gone: every answer still due is reported missing
        await self.collect(peer, due, check)

    async def collect(
        self, peer: Peer, due: dict[str, list[tuple[int, Sent, Expect]]], check: str | None
    ) -> None:
        """Take the answers until every one due (and the check's) has come, or the time is
        up; then settle, id by id, which answered what."""
        got: dict[str, list[dict[str, Any]]] = {}
        waiting = sum(len(d) for d in due.values()) + (check is not None)
        get: asyncio.Future[dict[str, Any]] | None = None
        try:
            async with asyncio.timeout(ANSWER_S):
                while waiting:
                    get = asyncio.ensure_future(peer.answers.get())
                    done, _ = await asyncio.wait({get, peer.reader}, return_when="FIRST_COMPLETED")
                    if get not in done:
                        break  # the server's output ended
                    answer = get.result()
                    if check is not None and answer.get("id") == json.loads(check):
                        self.checks += 1
                        sessions = answer.get("result", {})
                        if not isinstance(sessions, dict) or "sessions" not in sessions:
                            self.report.violate(self.sent, f"the check failed: {answer}")
                        check = None
                        waiting -= 1
                    elif self.well_formed(answer):
                        name = key(answer["id"])
                        got.setdefault(name, []).append(answer)
                        waiting -= len(got[name]) <= len(due.get(name, ()))
        except TimeoutError:
            pass
        finally:
            if get is not None:
                get.cancel()
        if check is not None:
            self.report.violate(self.sent, "the check after this batch got no answer")
        while not peer.answers.empty():  # late, or answering nothing
            if self.well_formed(answer := peer.answers.get_nowait()):
                got.setdefault(key(answer["id"]), []).append(answer)
        for name in due.keys() | got.keys():
            self.settle(due.get(name, []), got.get(name, []))

    def well_formed(self, answer: dict[str, Any]) -> bool:
        error = answer.get("error")
        fine = (
            answer.get("jsonrpc") == "2.0"
            and "id" in answer
            and (("result" in answer) != (error is not None))
            and (
                error is None
                or (
                    isinstance(error, dict)
                    and type(error.get("code")) is int
                    and isinstance(error.get("message"), str)
                )
            )
        )
        if not fine:
            self.report.violate(self.sent, f"a malformed answer: {json.dumps(answer)[:300]}")
        return fine

    def settle(
        self, expects: list[tuple[int, Sent, Expect]], answers: list[dict[str, Any]]
    ) -> None:
        """Match the answers that carry one id to the messages due under it, each answer to
        a message it may answer (a matching, not first come: two requests of one id, one of
        them cancelled, may answer in either order)."""
        outcomes: list[Outcome] = [a["error"]["code"] if "error" in a else RESULT for a in answers]
        owner: dict[int, int] = {}  # message due -> the answer it got

        def fits(due: int, answer: int) -> bool:
            allowed, outcome = expects[due][2].allowed, outcomes[answer]
            return outcome != INTERNAL_ERROR and (allowed is None or outcome in allowed)

        def place(answer: int, seen: set[int]) -> bool:
            for due in range(len(expects)):
                if due not in seen and fits(due, answer):
                    seen.add(due)
                    if due not in owner or place(owner[due], seen):
                        owner[due] = answer
                        return True
            return False

        for answer in range(len(answers)):
            place(answer, set())
        self.answered += min(len(answers), len(expects))
        self.outcomes.update(outcomes)
        missed = [due for due in range(len(expects)) if due not in owner]
        strays = sorted(set(range(len(answers))) - set(owner.values()))
        for due, answer in zip(missed, strays, strict=False):
            at, item, expect = expects[due]
            shown = json.dumps(answers[answer])[:300]
            if outcomes[answer] == INTERNAL_ERROR:
                self.report.violate(at, f"an internal error answers {item.shown()}: {shown}")
            else:
                wanted = sorted(map(str, expect.allowed or ()))
                self.report.violate(at, f"{item.shown()} answered {shown}, not one of {wanted}")
        for due in missed[len(strays) :]:
            at, item, _ = expects[due]
            self.report.violate(at, f"no answer to {item.shown()}")
        for answer in strays[len(missed) :]:
            shown = json.dumps(answers[answer])[:300]
            self.report.violate(self.sent, f"an answer to nothing that was asked: {shown}")

    # -- turns and lifecycle

    async def turn(self, peer: Peer) -> None:
        """A whole turn still runs; every other one is cancelled by ``$/cancelRequest`` as
        it starts: it ends ``cancelled`` (``done`` if it was quicker), or, cancelled before
        its turn began, the request is answered RequestCancelled (-32800) as LSP has it."""
        number = sum(self.turns.values()) + 1
        cancelled = number % 2 == 0
        msg_id = f"turn-{number}"
        run = self.gen.command("tether.run", {"prompt": f"turn {number}: say something"})
        request = {"jsonrpc": "2.0", "id": msg_id, "method": "workspace/executeCommand"}
        pieces = [framed(body(request | {"params": run}))]
        if cancelled:
            cancel_ = {"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": msg_id}}
            pieces.append(framed(body(cancel_)))
        wanted = {"done", "cancelled", str(REQUEST_CANCELLED)} if cancelled else {"done"}
        try:
            await peer.write(pieces)
            async with asyncio.timeout(ANSWER_S):
                answer = await peer.answers.get()
        except (TimeoutError, ConnectionError):
            self.report.violate(self.sent, f"turn {number} got no answer")
            return
        result, error = answer.get("result"), answer.get("error")
        if answer.get("id") != msg_id:
            ended = "another answer"
        elif isinstance(result, dict):
            ended = str(result.get("status"))
        else:
            ended = str(error.get("code") if isinstance(error, dict) else None)
        self.turns[ended] += 1
        if ended not in wanted:
            self.report.violate(self.sent, f"turn {number} answered {json.dumps(answer)[:300]}")

    async def episode(self, stub: LoopbackStub) -> None:
        """A short-lived server: messages before ``initialize``, a batch, a second
        ``initialize``, and an end (``exit`` after ``shutdown`` or without, a hang-up with
        or without ``shutdown``, a terabyte's Content-Length)."""
        rng, gen = self.rng, self.gen
        peer = await self.start(stub, self.root / "episodes", initialize=False)
        await self.exchange(peer, [*self.before_initialize(), self.initialize()])
        items: list[Sent] = []
        while len(items) < rng.randint(*BATCH):
            kind = rng.choices([k for k, _ in KINDS], [w for _, w in KINDS])[0]
            items += generate(gen, kind, items, self.workspace)
        await self.exchange(peer, [*items, *reinitialize(gen, self.workspace)])
        end = rng.choice(ENDS)
        self.peak_mib = max(self.peak_mib, peer.memory_mib("VmHWM") or 0.0)
        if end.startswith("shutdown"):
            shutdown = gen.request("lifecycle", "shutdown", None, {RESULT})
            tail = [shutdown, *cancel(gen, [shutdown])] if rng.random() < 0.5 else [shutdown]
            if rng.random() < 0.5:  # a turn runs as the shutdown comes: it ends first
                prompt = {"prompt": "a turn that shutdown ends"}
                run = gen.command("tether.run", prompt)
                tail.insert(0, gen.request("lifecycle", "workspace/executeCommand", run, {RESULT}))
            await self.exchange(peer, [*tail, *self.after_shutdown()], checked=False)
        if end == "terabyte":
            huge_length = Sent("terabyte", [b"Content-Length: %d\r\n\r\n" % 2**40])
            huge_length.expects.append(Expect(key(None), {INVALID_REQUEST}))
            await self.exchange(peer, [huge_length], checked=False)
        if end.endswith("exit"):
            exit_ = gen.notification("lifecycle", "exit", None)
            await self.exchange(peer, [exit_], checked=False)
        else:
            stdin = peer.client.process.stdin
            assert stdin is not None
            stdin.close()
        wanted = 1 if end == "exit" else 0  # LSP: `exit` without `shutdown` is code 1
        try:
            async with asyncio.timeout(15):
                code = await peer.client.process.wait()
        except TimeoutError:
            code = None
        self.exits[end] += 1
        if code != wanted:
            self.report.violate(self.sent, f"{end}: the server ended with {code}, not {wanted}")
        await peer.close()

    def before_initialize(self) -> list[Sent]:
        """Requests are refused -32002 with their id; notifications are dropped."""
        gen, rng = self.gen, self.rng
        items: list[Sent] = []
        for _ in range(rng.randint(2, 8)):
            match rng.randrange(5):
                case 0:
                    items += [valid_request(gen, "before-initialize")]
                case 1:
                    method = rng.choice((*LSP_REQUESTS_NOT_SERVED, "shutdown", gen.string()))
                    items += [gen.request("before-initialize", method, gen.junk())]
                case 2:
                    items += notification(gen)
                case 3:
                    items += bad_id(gen)
                case _:
                    items += not_json(gen)
        for item in items:
            for expect in item.expects:
                if expect.key != key(None):
                    expect.allowed = {NOT_INITIALIZED}
        return items

    def after_shutdown(self) -> list[Sent]:
        """Requests are refused -32600 with their id; notifications are dropped."""
        gen, rng = self.gen, self.rng
        items: list[Sent] = []
        for _ in range(rng.randint(1, 6)):
            match rng.randrange(4):
                case 0:
                    items += [valid_request(gen, "after-shutdown")]
                case 1:
                    method = rng.choice(("shutdown", "initialize", *LSP_REQUESTS_NOT_SERVED))
                    items += [gen.request("after-shutdown", method, gen.junk())]
                case 2:
                    items += notification(gen)
                case _:
                    items += cancel(gen, items)
        for item in items:
            for expect in item.expects:
                expect.allowed = {INVALID_REQUEST}
        return items

    # -- figures

    def memory(
        self,
        start: float | None,
        peak: float | None,
        warm: tuple[int, float | None] | None,
        steady: tuple[int, float | None] | None,
    ) -> None:
        figures = self.report.figures
        warm_at, warm_mib = warm or (0, None)
        steady_at, steady_mib = steady or (0, None)
        if start is None or peak is None or warm_mib is None or steady_mib is None:
            figures["memory"] = "not measured (it reads /proc/PID/status: Linux only)"
            return
        bound = start + PEAK_COPIES * self.largest / MiB + PEAK_SLACK_MIB
        figures["RSS MiB at start"] = f"{start:.1f}"
        figures["peak RSS MiB"] = (
            f"{peak:.1f} (bound {bound:.0f}: start + {PEAK_COPIES} x the largest message, "
            f"{self.largest / MiB:.1f} MiB, + {PEAK_SLACK_MIB})"
        )
        messages = steady_at - warm_at
        growth, allowed = steady_mib - warm_mib, growth_bound_mib(messages)
        figures["steady RSS MiB"] = (
            f"{warm_mib:.1f} -> {steady_mib:.1f} over messages {warm_at}..{steady_at} "
            f"({growth * MiB / max(messages, 1):+.0f} B a message; bound +{allowed:.1f} MiB)"
        )
        figures["peak RSS MiB of the short-lived servers"] = f"{self.peak_mib:.1f} (same bound)"
        for what, value in (("", peak), (" of a short-lived server", self.peak_mib)):
            if value > bound:
                self.report.violate(self.sent, f"peak RSS{what} {value:.0f} MiB, over {bound:.0f}")
        if growth > allowed:
            grown = f"{growth:.1f} MiB over messages {warm_at}..{steady_at}"
            self.report.violate(steady_at, f"RSS grew {grown} (bound {allowed:.1f})")

    def figures(self) -> None:
        figures = self.report.figures
        figures["messages"] = self.sent
        figures["by kind"] = " ".join(f"{k}={n}" for k, n in sorted(self.kinds.items()))
        figures["requests"] = self.requests
        figures["answered"] = self.answered
        figures["results"] = self.outcomes[RESULT]
        codes = sorted((c, n) for c, n in self.outcomes.items() if c != RESULT)
        figures["errors by code"] = " ".join(f"{c}={n}" for c, n in codes)
        figures["checks"] = self.checks
        figures["turns"] = " ".join(f"{s}={n}" for s, n in sorted(self.turns.items()))
        figures["servers"] = self.servers
        figures["restarts"] = sum(self.exits.values())
        figures["ends"] = " ".join(f"{e}={n}" for e, n in sorted(self.exits.items()))


async def campaign(seed: int, scale: int, root: Path) -> list[Report]:
    return [await Fuzz(seed, scale, root).run()]
