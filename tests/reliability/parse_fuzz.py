"""Parse fuzz: texts made to be slow for tree-sitter, through what the index and ``outline``
run on a workspace's files.

tree-sitter holds the GIL while it parses and queries, so a slow text holds the whole
server. Each text is one of six languages' files, built at random from the shapes that were
found slow (a token repeated: unclosed brackets, operators, keywords; nesting many levels
deep, closed or not; a real file with hundreds of openers sown into it) and from random
runs of every language's punctuation and keywords. Each is given to ``definitions`` (the
index's tag queries) and to ``outline``'s parse and walk.

Checked for each text: either finishes within the parse's budget for its size plus
``SLACK_S`` (the parse stops at its budget; what runs after it must be linear), and nothing
raises but ``TooSlow``.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from pathlib import Path

from tests.reliability.harness import Report
from tether.index.symbols import definitions
from tether.tools import parsing
from tether.tools.outline import _GRAMMARS, _lines, grammar_of

SLACK_S = 2.0  # past the parse's budget: the query and the walk of a tree it finished
SUFFIXES = (".py", ".js", ".ts", ".tsx", ".go", ".rs")
TOKENS = (
    *"[](){}<>-+*&|!?:;,.=@#$%^~`'\"\\/",
    *("if ", "def ", "lambda ", "class ", "fn ", "mod ", "impl ", "func ", "type ", "let "),
    *("function ", "=> ", "async ", "await ", "yield ", "match ", "struct ", "interface{"),
    *("<div>", "${", "/*", "*/", "//", "#[", "'a ", 'r#"', "\n", "\n    ", "x", "x!", "a["),
)
NESTINGS = {  # an opening and its closing, by language
    ".py": (("[", "]"), ("(", ")"), ("{", "}"), ("lambda: ", ""), ("not ", "")),
    ".js": (("(", ")"), ("{", "}"), ("function f(){", "}"), ("(() => ", ")"), ("[", "]")),
    ".ts": (("A<", ">"), ("(", ")"), ("{", "}"), ("class A { m() {", "}}")),
    ".tsx": (("<div>", "</div>"), ("(", ")"), ("{", "}")),
    ".go": (("func() {", "}"), ("if x {", "}"), ("(", ")"), ("[]", "")),
    ".rs": (("mod m {\n", "}"), ("fn g() {", "}"), ("Vec<", ">"), ("(", ")"), ("{", "}")),
}
REAL = {  # a small real file of each language, for openers to be sown into
    ".py": "class A:\n    def f(self, x):\n        return [x, {'k': (x, x)}]\n\n",
    ".js": "class A { f(x) { return [x, {k: (x)}]; } }\nfunction g() {}\n",
    ".ts": "interface I { f(): number }\nclass A implements I { f() { return 1; } }\n",
    ".tsx": "export function App() { return <div>{[1].map((x) => <b>{x}</b>)}</div>; }\n",
    ".go": "package p\n\nfunc F(x int) int { if x > 0 { return x }; return 0 }\n\n",
    ".rs": "struct S;\nimpl S { fn f(&self) -> Vec<u8> { vec![(1)] } }\nmod m { fn g() {} }\n",
}


def text_for(rng: random.Random, suffix: str, size: int) -> tuple[str, str]:
    """A text of about ``size`` characters, and the shape it was made by."""
    shape = rng.choice(("repeated", "nested", "unclosed", "sown", "random"))
    if shape == "repeated":
        unit = "".join(rng.choice(TOKENS) for _ in range(rng.randint(1, 3)))
        return "x = 1\n" + unit * (size // len(unit) + 1), f"{shape} {unit!r}"
    if shape in ("nested", "unclosed"):
        opening, closing = rng.choice(NESTINGS[suffix])
        depth = size // (len(opening) + len(closing))
        text = opening * depth + (closing * depth if shape == "nested" else "")
        return text, f"{shape} {opening!r}"
    if shape == "sown":
        real = REAL[suffix] * (size // len(REAL[suffix]) + 1)
        opener = rng.choice("[({<")
        cuts = sorted(rng.randrange(len(real)) for _ in range(rng.randint(100, 2_000)))
        pieces, last = [], 0
        for at in cuts:
            pieces += [real[last:at], opener * rng.randint(1, 50)]
            last = at
        return "".join([*pieces, real[last:]]), f"{shape} {opener!r}"
    return "".join(rng.choice(TOKENS) for _ in range(size // 2)), shape


def one(text: str, suffix: str) -> tuple[float, float, str]:
    """Seconds for the definitions, for the outline; what ended them (``ok``, ``too slow``)."""
    ended = Counter[str]()
    started = time.perf_counter()
    try:
        definitions(text, suffix)
        ended["ok"] += 1
    except parsing.TooSlow:
        ended["too slow"] += 1
    took = time.perf_counter() - started
    grammar = grammar_of(suffix)
    assert grammar is not None
    started = time.perf_counter()
    try:
        _lines(_GRAMMARS[suffix][2], parsing.parse(grammar[0], text.encode("utf-8", "replace")))
        ended["ok"] += 1
    except parsing.TooSlow:
        ended["too slow"] += 1
    return took, time.perf_counter() - started, "/".join(sorted(ended))


async def campaign(seed: int, scale: int, root: Path) -> list[Report]:
    """``scale`` texts of each language, up to 64 KiB each (256 KiB from 100 up)."""
    report = Report("parse fuzz", seed)
    rng = random.Random(seed)
    largest = 256 * 1024 if scale >= 100 else 64 * 1024
    slowest: tuple[float, str] = (0.0, "")
    ends: Counter[str] = Counter()
    started = time.perf_counter()
    for iteration in range(scale):
        for suffix in SUFFIXES:
            text, shape = text_for(rng, suffix, rng.randint(1024, largest))
            try:
                # In a thread: the event loop the other campaigns share is not held.
                define_s, outline_s, ended = await asyncio.to_thread(one, text, suffix)
            except Exception as exc:  # the campaign reports every failure
                report.violate(iteration, f"{suffix} {shape}: {exc!r}")
                continue
            ends[ended] += 1
            report.count("texts")
            what = f"{suffix} {shape}, {len(text):,} characters"
            slowest = max(slowest, (define_s, f"definitions of {what}"))
            slowest = max(slowest, (outline_s, f"outline of {what}"))
            bound = parsing.budget_s(len(text.encode("utf-8", "replace"))) + SLACK_S
            for task, took in (("definitions", define_s), ("outline", outline_s)):
                if took > bound:
                    over = f"took {took:.1f} s (> {bound:.1f} s)"
                    report.violate(iteration, f"{task} of {what} {over}")
    report.figures |= {
        "ended": ", ".join(f"{k} {v}" for k, v in sorted(ends.items())),
        "slowest": f"{slowest[0]:.2f} s ({slowest[1]})",
        "seconds": f"{time.perf_counter() - started:.1f}",
    }
    return [report]
