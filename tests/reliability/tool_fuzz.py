"""Tool-argument fuzz (issue 13, item 4): every built-in tool, called through the real
service and dispatcher with arguments hypothesis makes from the tool's JSON Schema and
past it: wrong types, missing and extra keys, megabytes, deep nesting, odd Unicode, lone
surrogates, NUL, text that is not JSON. The workspace is a real git repository with
symbolic links (inside, outside, into .git, dangling, a loop), a FIFO, binary, huge and
non-UTF-8 files, and names that are not UTF-8.

Each example is one reply: the generated call and, before or after it, a fixed sibling
read (``fs-list``); then the model answers in words. Half the examples (drawn) run in a
second copy of the workspace whose index is built and told of every change by tether's
own watcher (as under ACP), so ``index-grep``, ``fs-find`` and ``index-symbols`` answer
from it there; the campaign fails if that index does not answer. For every example:

- the turn ends ``done`` (never ``error``: no uncaught exception), the session's history
  loads, every call has exactly one answer in call order, and the next request the
  provider is handed has each call followed by its result;
- the generated call's answer is ``ok``, ``error`` or ``denied``; an ``error`` says what
  is wrong (not empty, no tool crash, "failed unexpectedly"); no answer is bigger than
  ``MAX_ANSWER`` characters, and no summary the editor is sent bigger than
  ``MAX_SUMMARY``;
- the sibling's answer is ``ok`` and exactly what it is alone;
- nothing approval-requiring runs without a decision: the scripted person denies
  everything but patches of ``scratch/`` (``command`` never starts, no read leaves the
  workspace), and one example in four runs with dialogs off: the call parks, is listed
  pending, and ``tether.deny`` then answers it; nothing outside ``scratch/`` changes
  (but the objects and refs a checkpoint of an allowed patch adds to ``.git``).

hypothesis drives each tool's examples (seeded, no database) from a thread while the
turns run on the event loop, so a failing example is shrunk before it is reported: a
violation names the seed, the tool, the iteration and the minimal example. Replay with
``python -m tests.reliability tool-fuzz --seed S``. (``hypothesis-jsonschema`` cannot
draw objects with the hypothesis this project runs, so ``from_schema`` below reads the
small part of JSON Schema that pydantic writes, and refuses any other.)
"""

from __future__ import annotations

import asyncio
import itertools
import json
import logging
import os
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_args

from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from tests.reliability.harness import Report, check_history
from tests.unit.agent.harness import OneProvider
from tether import app
from tether.agent.approval import Answer, Question
from tether.agent.events import ToolCallUpdate, Update
from tether.config import Configuration
from tether.errors import ProviderError
from tether.history import HistoryTool
from tether.index.progress import NoProgress
from tether.models import (
    AssistantMessage,
    Reply,
    ToolCall,
    ToolMessage,
    ToolStatus,
    TurnResult,
    UserMessage,
)
from tether.providers.base import ChatRequest, StreamEvent
from tether.service import Service
from tether.tools.base import NoDocuments, NoEditor
from tether.tools.builtin import builtin_tools

STATUSES = set(get_args(ToolStatus))
SIBLING = ToolCall(id="sibling", name="fs-list", arguments='{"path": ".", "depth": 1}')
MAX_ANSWER = 200_000  # characters: twice tools.max_read_bytes, whatever was asked
MAX_SUMMARY = 4_000  # characters of a call's one-line summary an editor is sent
TURN_S = 60.0  # one example's turn (and its resume) must end within this
MB = 2**20
AT_ONCE = 2  # tools fuzzed at once
GATED = ("command", "patch")  # the tools that always ask
SECRETS = ("s3cr3t-0utside-7f3a", "s3cr3t-in-git-7f3a")  # what no answer may hold

# -- the workspace ------------------------------------------------------------------------


def workspace(root: Path) -> Path:
    """A git repository holding what a hostile repository may hold."""
    ws, outside = root / "ws", root / "outside"
    (ws / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text(f"{SECRETS[0]}\n")

    def git(*args: str) -> None:
        identity = ("-c", "user.email=fuzz@tether", "-c", "user.name=fuzz")
        subprocess.run(["git", *identity, *args], cwd=ws, check=True, capture_output=True)

    git("init", "-q")
    with (ws / ".git" / "config").open("a") as config:
        config.write(f"# {SECRETS[1]}\n")
    (ws / "a.txt").write_text("a\nb\nc\n")
    (ws / ".gitignore").write_text("*.log\n")
    (ws / "src" / "app.py").write_text("class A:\n    def f(self):\n        pass\n")
    (ws / "src" / "lib.ts").write_text("export function g(): number { return 1 }\n")
    (ws / "src" / "main.go").write_text("package main\n\nfunc main() {}\n")
    (ws / "src" / "lib.rs").write_text("struct S;\nimpl S { fn h(&self) {} }\n")
    (ws / "src" / "broken.py").write_text("def (:\n")
    git("add", ".")
    git("commit", "-qm", "first")
    (ws / "src" / "app.py").write_text("class A:\n    def f(self):\n        return 1\n")
    (ws / "staged.txt").write_text("staged\n")
    git("add", "staged.txt")
    (ws / "crlf.txt").write_bytes(b"one\r\ntwo\r\n")
    (ws / "odd.txt").write_text("h\u00e9llo \u202eevil\u202c \ufeff\U0001f600 \u0301\n")
    (ws / "bin.dat").write_bytes(b"\x00\x01\x02binary\x00")
    (ws / "latin1.txt").write_bytes(b"caf\xe9\n")
    (ws / "long-line.txt").write_text("x" * 100_000 + "\n")
    (ws / "many-lines.txt").write_text("".join(f"line {n}\n" for n in range(10_000)))
    (ws / "big.log").write_bytes(b"a line of a log too big to read whole\n" * 600_000)
    (ws / "empty.py").write_text("")
    (ws / "dir.py").mkdir()
    (ws / "-rf").write_text("named like an option\n")
    (ws / "new\nline.txt").write_text("a name with a newline\n")
    deep = ws.joinpath(*(f"d{n}" for n in range(12)))
    deep.mkdir(parents=True)
    (deep / "f.py").write_text("def deep(): pass\n")
    with open(os.fsencode(ws) + b"/caf\xe9.txt", "wb") as file:
        file.write(b"a name that is not UTF-8\n")
    os.mkfifo(ws / "fifo")
    os.mkfifo(ws / "fifo.py")
    for name, target in [
        ("link-a.txt", "a.txt"),
        ("link-out.txt", "../outside/secret.txt"),
        ("link-outdir", "../outside"),
        ("link-git", ".git/config"),
        ("link-dangling", "nowhere"),
        ("loop-1", "loop-2"),
        ("loop-2", "loop-1"),
        ("src/up", ".."),
        ("link-fifo", "fifo"),
    ]:
        (ws / name).symlink_to(target)
    (ws / "scratch").mkdir()
    return ws


# Where tether itself writes in the repository: a checkpoint of an allowed patch adds its
# blobs to the object store and names its commit under refs/tether/ (``checkpoints/``);
# the person's index, HEAD and branches are never written, and are looked at.
CHECKPOINTS = (".git/objects", ".git/refs/tether", ".git/logs/refs/tether")
HOLDERS = (".git/refs", ".git/logs", ".git/logs/refs")  # their times change with refs/tether


def snapshot(root: Path) -> dict[str, tuple[int, int, int]]:
    """Every entry under ``root`` (its state store, the scratch directory and what
    checkpoints write aside)."""
    seen: dict[str, tuple[int, int, int]] = {}
    kept = {str(root / "ws" / part) for part in CHECKPOINTS}
    holders = {str(root / "ws" / part) for part in HOLDERS}
    for directory, dirs, files in os.walk(root):
        if directory == str(root):
            dirs[:] = [d for d in dirs if d != "state"]
        if directory == str(root / "ws"):
            dirs[:] = [d for d in dirs if d != "scratch"]
            files = [f for f in files if f != "scratch"]
        dirs[:] = [d for d in dirs if os.path.join(directory, d) not in kept]
        for name in dirs + files:
            path = os.path.join(directory, name)
            info = os.lstat(path)
            mtime = 0 if path in holders else info.st_mtime_ns
            seen[path] = (info.st_mode, info.st_size, mtime)
    return seen


# -- the arguments ------------------------------------------------------------------------

FILES = ["a.txt", "src/app.py", "src/lib.ts", "src/main.go", "src/lib.rs", "src/broken.py"]
FILES += ["crlf.txt", "odd.txt", "many-lines.txt", "long-line.txt", "empty.py", "staged.txt"]
FILES += ["link-a.txt", "caf\\xe9.txt", "d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/f.py"]
DIRS = [".", "src", "d0", "d0/d1/d2", "dir.py", "scratch"]
WRITABLE = ["scratch/new.txt", "scratch/sub/x.py", "scratch/caf\\xe9.txt", "scratch/a b.md"]
SANE: dict[str, list[Any]] = {
    "path": [*FILES, *DIRS, *WRITABLE],
    "pattern": ["a", "class", "def", "line 9", "^def", "x+", "(?i)A", "\\bf\\b", "[0-9]{3}"],
    "glob": ["*", "*.py", "**/*.txt", "src/*", "*.{py,ts}", "**/d5/**"],
    "rev": ["HEAD", "HEAD~1", "HEAD^", "main", "master..HEAD"],
    "writable": [*WRITABLE, "a.txt", "src/app.py", "crlf.txt"],
    "command": ["true", "touch PWNED", "ls"],
    "content": ["", "a\n", "line\nline\n", "\u00e9\n"],
    "edits": [[{"old": "a", "new": "b"}], [{"old": "line", "new": ""}], [{"old": "x", "new": "y"}]],
}
PATHS = [
    *("a.txt", "src/app.py", "src", ".", "", "..", "/", "~", "~root", "src/up/a.txt"),
    *("crlf.txt", "odd.txt", "bin.dat", "latin1.txt", "long-line.txt", "many-lines.txt"),
    *("big.log", "empty.py", "dir.py", "-rf", "--help", "new\nline.txt", "fifo", "fifo.py"),
    *("caf\\xe9.txt", "caf\udce9.txt", "caf\u00e9.txt", "\ud800", "a\x00b", "a.txt\x00"),
    *("link-a.txt", "link-out.txt", "link-outdir", "link-outdir/secret.txt", "link-git"),
    *("link-dangling", "loop-1", "link-fifo", ".git", ".git/config", ".GIT/config", ".git."),
    *("src/../.git/HEAD", "a.txt/", "a.txt/x", "../outside/secret.txt", "/etc/passwd"),
    *("/dev/zero", "/proc/self/environ", "scratch/new.txt", "scratch/sub/x.py", "scratch"),
    *("d0/d1/d2/d3/d4/d5/d6/d7/d8/d9/d10/d11/f.py", "x" * 300, "a/" * 3000, "*", "?"),
    *("src/*.py", "file:///etc/passwd", "C:\\Windows", "\\\\server\\share", " a.txt "),
]
GLOBS = [
    *("*", "**", "**/*.py", "*.{py,ts}", "src/**/*.ts", "{", "{a,b", "}", "[", "[]", "[!"),
    *("[z-a]", "\\", "a\\", "[\\", "/", "./", "?", "**/", "{" * 1000, "**/" * 1000, "*" * 5000),
    *("[[:alpha:]]", "{a,{b,{c,d}}}", ",", "-", "--pre=sh", "!*.py", "a\x00", "\udce9*"),
]
REGEXES = [
    *("a", "", ".", "^", "$", "(", ")", "[", "]", "{", "\\", "a{1000000}", "a{2,1}"),
    *("(a*)*b", "(?<=a)b", "(?=a)", "\\1", "(a)\\1", "\\p{Greek}", "\\pL", "\\p{Nope}"),
    *("(?i)A", "(?P<n>a)", "[[:alpha:]]", "\\b", "\\Z", "\\x{110000}", "\\u{D800}", "-e"),
    *("--pre=sh", "--files", "\n", "a\nb", "\x00", "a\x00b", "\ud800", "(" * 1000, "a|" * 10_000),
    *("[^\\x00-\\x{10FFFF}]", ".*.*.*.*.*=.*", "(?s).", "\\r\\n", "line 9999", "class"),
]
REVS = [
    *("HEAD", "HEAD~1", "HEAD~99999", "main..HEAD", "@{-1}", "HEAD^{tree}", ":/first"),
    *("-p", "--output=x", " ", "", "\x00", "HEAD:a.txt", "a.txt", "..", "...", "@"),
    *("refs/heads/../../x", "HEAD@{upstream}", "HEAD\n", "HEAD\x00", "--", "-", "\ud800"),
]
COMMANDS = ["true", "touch PWNED", "rm -rf scratch", "echo $HOME", "sleep 100", "\x00", " "]
TEXTS = ["", "a", "a\n", "\n", "b\nc", "class A:", "\r\n", "x" * 10_000, "\ud800", "\x00"]
NUMBERS: list[Any] = [0, -1, 1, 2, 49, 50, 51, 2000, 2001, 2**31, 2**63, 10**30, 1.5, -0.0]
ODD_CHARS = [
    *("\x00", "\ud800", "\udbff", "\udc00", "\udfff", "\udc80", "\udce9", "\ufeff", "\u202e"),
    *("\u200b", "\uffff", "\U0010ffff", "\r", "\n", "\t", "\x1b[2J", "\u0301", "\ufffd"),
    *("..", "/", "\\", "*", "{", "}", "[", "]", "-", "~", "$", "`", "'", '"', "%s", "\x7f"),
]


class Raw:
    """A generated call's raw arguments, as the model sent them; shown short."""

    __slots__ = ("kind", "text")

    def __init__(self, kind: str, text: str) -> None:
        self.kind, self.text = kind, text

    def __repr__(self) -> str:
        return f"Raw({self.kind}, {shown(self.text)})"


def shown(text: str, limit: int = 240) -> str:
    if len(text) <= limit:
        return ascii(text)
    return f"{text[: limit // 2]!a} … [{len(text):,} characters] … {text[-60:]!a}"


_KNOWN = {"type", "properties", "required", "additionalProperties", "title", "description"}
_KNOWN |= {"default", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
_KNOWN |= {"minLength", "maxLength", "items", "minItems", "maxItems", "anyOf", "$ref", "$defs"}
_KNOWN |= {"enum", "const"}


def from_schema(schema: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid by the JSON Schema pydantic writes for a params model (objects,
    strings, numbers, booleans, null, arrays, anyOf, $ref, enum, const); any other keyword
    fails."""
    if unknown := set(schema) - _KNOWN:
        raise ValueError(f"the fuzz does not know the schema keywords {sorted(unknown)}")
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "const" in schema:
        return st.just(schema["const"])
    if "$ref" in schema:
        return from_schema(defs[schema["$ref"].rpartition("/")[2]], defs)
    if "anyOf" in schema:
        return st.one_of([from_schema(option, defs) for option in schema["anyOf"]])
    match schema.get("type"):
        case "object":
            properties = schema.get("properties", {})
            required = set(schema.get("required", []))
            strategies = {name: from_schema(s, defs) for name, s in properties.items()}
            return st.fixed_dictionaries(
                {k: v for k, v in strategies.items() if k in required},
                optional={k: v for k, v in strategies.items() if k not in required},
            )
        case "string":
            return st.text(min_size=schema.get("minLength", 0), max_size=schema.get("maxLength"))
        case "integer":
            return st.integers(schema.get("minimum"), schema.get("maximum"))
        case "number":
            low = schema.get("minimum", schema.get("exclusiveMinimum"))
            high = schema.get("maximum", schema.get("exclusiveMaximum"))
            return st.floats(
                low,
                high,
                exclude_min="exclusiveMinimum" in schema,
                exclude_max="exclusiveMaximum" in schema,
                allow_nan=False,
            )
        case "boolean":
            return st.booleans()
        case "null":
            return st.none()
        case "array":
            items = from_schema(schema["items"], defs)
            return st.lists(items, min_size=schema.get("minItems", 0), max_size=4)
    raise ValueError(f"the fuzz does not know the schema {schema}")


odd_text = st.lists(
    st.one_of(st.sampled_from(ODD_CHARS), st.characters(exclude_categories=())), max_size=12
).map("".join)
json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(),
        odd_text,
        st.sampled_from(NUMBERS),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(odd_text, inner, max_size=3),
    max_leaves=8,
)


def huge_text(ascii_only: bool, most: int = 8 * MB + 1) -> st.SearchStrategy[str]:
    """A string whose JSON is about 64 KiB, 1 MiB, just under and just over the 8 MiB that
    arguments may take (a reply's whole text is capped at 16 Mi characters upstream)."""

    def made(spec: tuple[str, int]) -> str:
        piece, size = spec
        encoded = len(json.dumps(piece, ensure_ascii=ascii_only)) - 2
        return piece * (size // encoded)

    return st.tuples(
        st.sampled_from(["a", "\u00e9", "\ud800", "\x00", "[", '"', "\\", "../", "ab\n", "*"]),
        st.sampled_from([size for size in (2**16, MB, 8 * MB - 64, 8 * MB + 1) if size <= most]),
    ).map(made)


def interesting(tool: str, name: str) -> st.SearchStrategy[Any]:
    """Values a field of this name is likely to break on."""
    if name == "path":
        known = PATHS
    elif name == "glob" or (tool == "fs-find" and name == "pattern"):
        known = GLOBS
    elif name == "pattern":
        known = REGEXES
    elif name == "rev":
        known = REVS
    elif name == "command":
        known = COMMANDS
    elif name in ("content", "old", "new"):
        known = TEXTS
    elif name == "edits":
        edit = st.fixed_dictionaries({"old": interesting(tool, "old"), "new": odd_text})
        return st.lists(edit, max_size=3)
    else:
        return st.sampled_from(NUMBERS)
    picked = st.sampled_from(known)
    joined = st.tuples(picked, odd_text, st.booleans()).map(
        lambda t: t[0] + t[1] if t[2] else t[1] + t[0]
    )
    return st.one_of(picked, picked, joined)  # two in three as they are


# Sizes the campaign does not reach yet, for a defect outside what it may change: the
# dispatcher asks `command`'s rule_key before asking the person, and command_rules.family_of
# runs shlex.split, whose time is quadratic in a word's length, on the event loop (a
# command line of 1 MiB holds the server for seconds, 8 MiB for many minutes). Owner:
# tools/command_rules.py. Remove once fixed.
SPARED = {("command", "command"): 2**16}
# How often each kind of arguments is drawn (megabytes are costly: rarely).
WEIGHTS = {"plain": 10, "schema": 4, "pointed": 10, "wrong-type": 4, "missing": 2}
WEIGHTS |= {"extra": 2, "odd": 4, "raw": 4, "deep": 2, "huge": 1}
KINDS = [kind for kind, weight in WEIGHTS.items() for _ in range(weight)]


def arguments(tool: str, schema: dict[str, Any]) -> st.SearchStrategy[Raw]:
    valid = from_schema(schema, schema.get("$defs", {}))
    fields = sorted(schema.get("properties", {})) or ["path"]
    required = set(schema.get("required", []))

    @st.composite
    def draw_raw(draw: st.DrawFn) -> Raw:
        kind = draw(st.sampled_from(KINDS))
        value: Any = draw(valid)
        ascii_only = draw(st.booleans())
        if kind == "plain":  # what a careful model sends: valid, naming what is there
            for name in schema.get("properties", {}):
                key = "glob" if tool == "fs-find" and name == "pattern" else name
                key = "writable" if tool == "patch" and name == "path" else key
                if key in SANE and (name in required or draw(st.booleans())):
                    value[name] = draw(st.sampled_from(SANE[key]))
            if "edits" in value and "content" in value:
                del value[draw(st.sampled_from(["edits", "content"]))]
        elif kind == "pointed":
            for name in draw(st.lists(st.sampled_from(fields), min_size=1, unique=True)):
                value[name] = draw(interesting(tool, name))
        elif kind == "wrong-type":
            value[draw(st.sampled_from(fields))] = draw(json_values)
        elif kind == "missing":
            for name in draw(st.lists(st.sampled_from(sorted(value) or fields), unique=True)):
                value.pop(name, None)
        elif kind == "extra":
            value.update(draw(st.dictionaries(odd_text, json_values, min_size=1, max_size=4)))
        elif kind == "odd":
            for name in fields:
                if draw(st.booleans()):
                    value[name] = draw(odd_text)
        elif kind == "huge":
            name = draw(st.sampled_from(fields))
            value[name] = draw(huge_text(ascii_only, SPARED.get((tool, name), 8 * MB + 1)))
        elif kind == "deep":
            return Raw(kind, draw(deep_text(fields)))
        elif kind == "raw":
            return Raw(kind, draw(raw_text(value, ascii_only)))
        return Raw(kind, json.dumps(value, ensure_ascii=ascii_only))

    return draw_raw()


def deep_text(fields: list[str]) -> st.SearchStrategy[str]:
    """Arrays and objects nested around (and past) the 64 levels arguments may nest."""

    def nested(spec: tuple[int, str, str]) -> str:
        depth, name, shape = spec
        opened, closed = {
            "array": ("[" * depth, "]" * depth),
            "object": ('{"a": ' * depth, "}" * depth),
            "unclosed": ("[" * depth, ""),
            "in-a-string": ('"' + "[" * depth, '"'),
            "escaped-quote": ('"\\"' + "[" * depth, '"'),
        }[shape]
        return json.dumps({name: None})[:-5] + opened + "1" + closed + "}"

    return st.tuples(
        st.sampled_from([1, 62, 63, 64, 65, 66, 1000, 10_000, 200_000]),
        st.sampled_from(fields),
        st.sampled_from(["array", "object", "unclosed", "in-a-string", "escaped-quote"]),
    ).map(nested)


def raw_text(value: dict[str, Any], ascii_only: bool) -> st.SearchStrategy[str]:
    """Text that is not a JSON object: cut, broken, or another JSON value."""
    whole = json.dumps(value, ensure_ascii=ascii_only)
    return st.one_of(
        st.sampled_from(["", " ", "null", "[]", '"x"', "1", "true", "{", "}", "NaN", "{}{}"]),
        st.sampled_from(['{"path": "a.txt",}', "{'path': 'a.txt'}", '{"path": "\\x00"}']),
        st.sampled_from(['{"a": 1, "a": 2}', '{"path": "\\ud800"}', '{"path": "\\u0000"}']),
        st.integers(0, max(0, len(whole) - 1)).map(lambda cut: whole[:cut]),
        st.tuples(odd_text, st.booleans()).map(lambda t: whole + t[0] if t[1] else t[0] + whole),
        odd_text,
        json_values.map(json.dumps),
    )


# -- a person, an editor and the checks ------------------------------------------------------


class Person:
    """Denies every approval-requiring call but a patch of a file under ``scratch/``."""

    def __init__(self, workspace: Path) -> None:
        self.scratch = workspace / "scratch"
        self.allowed: set[str] = set()

    def can_ask(self) -> bool:
        return True

    async def ask(self, session: str, question: Question) -> Answer | None:
        if question.call.tool == "patch" and self._in_scratch(question.call.arguments):
            self.allowed.add(question.call.call_id)
            return "allow"
        return "deny"

    def _in_scratch(self, arguments: dict[str, Any] | str) -> bool:
        path = arguments.get("path") if isinstance(arguments, dict) else None
        if not isinstance(path, str) or not path or len(path) > 1000 or "\0" in path:
            return False
        try:
            where = (self.scratch.parent / path).resolve()
        except (OSError, RuntimeError, ValueError):
            return False
        return where != self.scratch and where.is_relative_to(self.scratch)

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        return False

    async def allow_server(self, name: str, shown: str) -> bool:
        return False


def wire(value: BaseModel, exclude_none: bool = True) -> dict[str, Any]:
    """``value`` made JSON as the LSP front makes it (``lsp/errors.py``, ``lsp/updates.py``),
    but for the escaping of its strings that follows (``outbound_json``, which cannot fail)."""
    dumped: dict[str, Any] = value.model_dump(mode="json", exclude_none=exclude_none)
    return dumped


class Editor:
    """The turn's updates, each sent over the wire as the LSP front sends it."""

    def __init__(self) -> None:
        self.updates: list[Update] = []

    def send(self, update: Update) -> None:
        wire(update, exclude_none=False)
        self.updates.append(update)


class Provider:
    """Replies by the turn's prompt, so that turns of several sessions run at once; keeps
    the requests each turn was handed."""

    def __init__(self) -> None:
        self.script: dict[str, list[Reply]] = {}
        self.requests: dict[str, list[ChatRequest]] = {}

    async def stream(self, request: ChatRequest) -> AsyncIterator[StreamEvent]:
        first = request.messages[0]
        prompt = first.content if isinstance(first, UserMessage) else ""
        self.requests.setdefault(prompt, []).append(request)
        if not (replies := self.script.get(prompt)):
            raise ProviderError(f"no reply scripted for {prompt!r}")
        yield replies.pop(0)

    async def aclose(self) -> None:
        pass


# What an example logs, wherever in its turn (tasks and threads inherit the context).
EXAMPLE: ContextVar[list[str] | None] = ContextVar("EXAMPLE", default=None)


class Logged(logging.Handler):
    """What tether logs as an error (a tool's crash, a turn's), by example: each one is a
    problem of the example it happened in."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.elsewhere: list[str] = []  # logged outside any example

    def emit(self, record: logging.LogRecord) -> None:
        sink = EXAMPLE.get()
        (self.elsewhere if sink is None else sink).append(record.getMessage())


def request_problems(request: ChatRequest) -> list[str]:
    """The provider was handed each call followed by exactly its results, in order."""
    problems = []
    messages = list(request.messages)
    for at, message in enumerate(messages):
        if isinstance(message, AssistantMessage) and message.tool_calls:
            ids = [call.id for call in message.tool_calls]
            after = messages[at + 1 : at + 1 + len(ids)]
            got = [m.result.call_id for m in after if isinstance(m, ToolMessage)]
            if got != ids:
                problems.append(f"the provider was handed calls {ids} followed by {got}")
    return problems


@dataclass
class Fuzz:
    root: Path
    service: Service
    provider: Provider
    person: Person
    baseline: str = ""  # the sibling's answer, alone
    files: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # as they must stay
    ids: itertools.count[int] = field(default_factory=itertools.count)
    done: int = 0  # examples run

    @property
    def index_answering(self) -> bool:
        """Whether its index is built and followed: searches answer from it now."""
        index = self.service.in_force.index
        return index is not None and index.ready and index.following

    async def turn(
        self, tool: str, raw: Raw, sibling_first: bool, park: bool
    ) -> tuple[str, list[str]]:
        """One reply holding the generated call and the sibling: the generated call's
        status, and what went wrong."""
        call = ToolCall(id=f"fuzz_{next(self.ids)}", name=tool, arguments=raw.text)
        calls = (SIBLING, call) if sibling_first else (call, SIBLING)
        prompt = f"fuzz {call.id}"
        self.provider.script[prompt] = [Reply(tool_calls=calls), Reply(text="done")]
        logged: list[str] = []
        EXAMPLE.set(logged)  # this coroutine runs in a task of its own: its own context
        editor = Editor()
        session = self.service.open(prompt, None)
        problems: list[str] = []
        result = await asyncio.wait_for(
            self.service.run(session, prompt, editor, ask=not park), TURN_S
        )
        problems += self._sent(result)
        if result.status == "awaiting_approval":
            problems += self._parked(session, result, call.id, sibling_first)
            result = await asyncio.wait_for(
                self.service.deny(session, None, "fuzz: parked, then denied", editor), TURN_S
            )
            problems += self._sent(result)
        if result.status != "done":
            problems.append(f"the turn ended {result.status}: {shown(result.error or '')}")
        answers = self._answers(session, problems)
        problems += self._answered(tool, call.id, answers)
        if requests := self.provider.requests.pop(prompt, [])[1:]:
            problems += request_problems(requests[-1])
        self.provider.script.pop(prompt, None)
        for update in editor.updates:
            if isinstance(update, ToolCallUpdate) and len(update.summary) > MAX_SUMMARY:
                problems.append(f"a summary of {len(update.summary):,} characters was sent")
        if (status := self.service.store.sessions.get(session).status) != result.status:
            problems.append(f"the session's status is {status}, its turn's {result.status}")
        problems += [f"tether logged an error: {shown(m)}" for m in logged]
        self.done += 1
        if tool in GATED or self.done % 16 == 0:  # a read writes nothing: looked at now and then
            problems += self._unchanged()
        if tool == "patch":  # only a patch writes there (when the person allowed it)
            empty(self.person.scratch)
        mine = answers.get(call.id)
        return (mine.status if mine else "unanswered"), problems

    def _unchanged(self) -> list[str]:
        if (now := snapshot(self.root)) == self.files:
            return []
        changed = sorted(set(now.items()) ^ set(self.files.items()))[:3]
        self.files = now
        return [f"files outside scratch/ changed (by this example or one beside): {changed}"]

    @staticmethod
    def _sent(value: BaseModel) -> list[str]:
        try:
            wire(value)
        except Exception as exc:  # what the editor would get instead: an internal error
            return [f"a {type(value).__name__} cannot be sent: {exc!r}"]
        return []

    def _parked(self, session: str, result: TurnResult, call_id: str, first: bool) -> list[str]:
        """Parked: the generated call is pending, and the sibling answered only if it
        came first (a read after a parked call waits for the resume)."""
        problems = []
        pending = [p.call_id for p in result.pending or []]
        if pending != [call_id]:
            problems.append(f"parked with pending {pending}, not the generated call")
        history = self.service.history(session)
        problems += self._sent(history)
        answered = [m.call_id for m in history.messages if isinstance(m, HistoryTool)]
        if answered != ([SIBLING.id] if first else []):
            problems.append(f"parked with {answered} answered")
        return problems

    def _answers(self, session: str, problems: list[str]) -> dict[str, HistoryTool]:
        try:
            history = self.service.history(session)
        except Exception as exc:  # the history must load, whatever the call held
            problems.append(f"the history does not load: {exc!r}")
            return {}
        try:
            sent = wire(history)
        except Exception as exc:  # what the editor would get instead: an internal error
            problems.append(f"a History cannot be sent: {exc!r}")
            sent = history.model_dump()
        problems += check_history(sent, parked=False)
        return {m.call_id: m for m in history.messages if isinstance(m, HistoryTool)}

    def _answered(self, tool: str, call_id: str, answers: dict[str, HistoryTool]) -> list[str]:
        problems = []
        if sorted(answers) != sorted([call_id, SIBLING.id]):
            return [f"answered {sorted(answers)}, not the two calls"]
        sibling, mine = answers[SIBLING.id], answers[call_id]
        if sibling.status != "ok" or sibling.content != self.baseline:
            problems.append(f"the sibling was answered {sibling.status}: {shown(sibling.content)}")
        for result in (sibling, mine):
            if result.status not in STATUSES:
                problems.append(f"status {result.status!r} is not the contract's")
            if len(result.content) > MAX_ANSWER:
                problems.append(f"a {result.status} answer of {len(result.content):,} characters")
        if mine.status not in ("ok", "error", "denied"):
            problems.append(f"the call was answered {mine.status}: {shown(mine.content)}")
        if not mine.content.strip():
            problems.append(f"the call was answered {mine.status} with nothing to read")
        if mine.status == "error" and "failed unexpectedly" in mine.content:
            problems.append(f"the tool crashed: {shown(mine.content)}")
        if any(secret in mine.content for secret in SECRETS):
            problems.append(f"{tool} read outside the workspace or in .git/ unasked")
        gated_ran = tool in GATED and mine.started_at is not None
        if gated_ran and call_id not in self.person.allowed:
            problems.append(f"{tool} started without the person allowing it")
        return problems


def empty(directory: Path) -> None:
    """Remove what ``directory`` holds; never the directory itself (a listing shows it)."""
    for entry in os.scandir(directory):
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path)
        else:
            os.unlink(entry.path)


async def build(root: Path, indexed: bool = False) -> Fuzz:
    """The fuzzed service in a workspace of its own under ``root``; ``indexed``: its index
    built and followed (by tether's watcher), so searches answer from it."""
    ws = await asyncio.to_thread(workspace, root)
    config = Configuration({})
    layer = {"state_dir": str(root / "state"), "tools": {"index": indexed}}
    assert config.set_layer("fuzz", layer) is None
    provider, person = Provider(), Person(ws)
    service = app.build(
        config, ws, NoDocuments(), person, NoEditor(), providers=OneProvider(provider)
    )
    if indexed and await service.in_force.watch_files():
        await service.in_force.build_index(NoProgress())
        service.in_force.files_changed([], following=True)
    fuzz = Fuzz(root, service, provider, person, files=snapshot(root))
    provider.script["baseline"] = [Reply(tool_calls=(SIBLING,)), Reply(text="done")]
    session = service.open("baseline", None)
    await service.run(session, "baseline", Editor())
    alone = service.history(session).messages
    fuzz.baseline = next(m.content for m in alone if isinstance(m, HistoryTool))
    return fuzz


# -- the campaign --------------------------------------------------------------------------


class Violation(AssertionError):
    pass


def fuzz_tool(
    fuzzes: dict[bool, Fuzz],
    loop: asyncio.AbstractEventLoop,
    tool: str,
    schema: dict[str, Any],
    s: int,
    n: int,
) -> Report:
    """One tool's examples, driven by hypothesis in this (worker) thread; each in the
    workspace without an index or in the one whose index answers (``fuzzes[indexed]``)."""
    report = Report(f"tool-fuzz {tool}", s)
    statuses: Counter[str] = Counter()
    last: list[tuple[int, Raw, list[str]]] = []  # the latest failure: after shrinking, minimal
    iteration = itertools.count(1)

    @settings(
        max_examples=n,
        database=None,
        deadline=None,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
        print_blob=False,
    )
    @seed(s)
    @given(
        raw=arguments(tool, schema),
        sibling_first=st.booleans(),
        park=st.integers(0, 3),
        indexed=st.booleans(),
    )
    def example(raw: Raw, sibling_first: bool, park: int, indexed: bool) -> None:
        at = next(iteration)
        turn = fuzzes[indexed].turn(tool, raw, sibling_first, park == 0)
        try:
            status, problems = asyncio.run_coroutine_threadsafe(turn, loop).result()
        except Exception as exc:  # a turn that raised, or did not end in time
            status, problems = "raised", [f"the turn raised {exc!r}"]
        if not last:  # not shrinking
            statuses[status] += 1
            report.count("examples")
            if fuzzes[indexed].index_answering:
                report.count("the index answering")
        if problems:
            last[:] = [(at, raw, problems)]
            raise Violation("; ".join(problems))

    started = time.perf_counter()
    try:
        example()
    except Violation:
        pass
    except Exception as exc:  # hypothesis itself failed (a flaky example, a bad strategy)
        report.violate(next(iteration), f"{tool}: {exc!r}")
    for at, raw, problems in last:
        report.violate(at, f"{tool}: {'; '.join(problems)}; minimal example: {raw!r}")
    report.figures.update(sorted(statuses.items()))
    report.figures["seconds"] = round(time.perf_counter() - started, 1)
    return report


async def campaign(seed: int, scale: int, root: Path) -> list[Report]:
    started = time.perf_counter()
    logged, logger = Logged(), logging.getLogger("tether")
    logger.addHandler(logged)
    propagate, logger.propagate = logger.propagate, False  # counted, not printed
    try:
        fuzzes = {False: await build(root / "plain"), True: await build(root / "indexed", True)}
        loop = asyncio.get_running_loop()
        # Two tools at a time, each driven from a thread of its own: their turns overlap on
        # the event loop as two editors' would (and the subprocesses use both cores).
        with ThreadPoolExecutor(AT_ONCE, thread_name_prefix="tool-fuzz") as threads:
            runs = [
                loop.run_in_executor(
                    threads,
                    fuzz_tool,
                    fuzzes,
                    loop,
                    tool.name,
                    tool.params.model_json_schema(),
                    seed,
                    scale,
                )
                for tool in builtin_tools()
            ]
            # Every tool's run ends before the pool is left: one that raised while the others
            # still wait on this loop would otherwise leave them (and the pool's exit) hung.
            ended = await asyncio.gather(*runs, return_exceptions=True)
            if failures := [r for r in ended if isinstance(r, BaseException)]:
                raise failures[0]
            reports = [r for r in ended if not isinstance(r, BaseException)]
        unchanged = [problem for fuzz in fuzzes.values() for problem in fuzz._unchanged()]
        for fuzz in fuzzes.values():
            await fuzz.service.shutdown()
    finally:
        logger.removeHandler(logged)
        logger.propagate = propagate
    total = Report("tool-fuzz", seed)
    for problem in unchanged:
        total.violate(0, problem)
    # Counted over the examples, not read once after the build: the watch may be starting
    # again then (a name that is not UTF-8 pauses it for a second), as CI once saw.
    if not any(r.figures.get("the index answering") for r in reports):
        total.violate(0, "no example met the second workspace's index built and followed")
    for message in logged.elsewhere:
        total.violate(0, f"tether logged an error outside any example: {shown(message)}")
    total.figures["tools"] = len(reports)
    total.figures["examples"] = sum(r.figures.get("examples", 0) for r in reports)
    total.figures["violations of every tool"] = sum(len(r.violations) for r in reports)
    total.figures["seconds"] = round(time.perf_counter() - started, 1)
    return [*reports, total]
