"""What the campaigns share: a provider stub that answers by what it is asked (so a
server killed at any instant, and its successor, always get a sensible reply), real
``tether serve`` processes, and the checks of a session's record.

A campaign is a function of a seed; it returns a ``Report`` whose figures the tests
print and whose violations must be none. A violation names its seed and iteration, so
``python -m tests.reliability CAMPAIGN --seed S`` (at the scale it ran) replays it.
"""

from __future__ import annotations

import asyncio
import json
import random
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tests.e2e.conftest import Editor, launch, server_env
from tests.support import anthropic_stub, provider_stub
from tests.support.loopback import Exchange, LoopbackStub, Scripted
from tests.support.repositories import git_repository

Wire = Literal["openai", "anthropic"]
COMPACTION_SYSTEM = "You write faithful, compact summaries of coding sessions."


@dataclass
class Report:
    name: str
    seed: int
    figures: dict[str, Any] = field(default_factory=dict)
    violations: list[str] = field(default_factory=list)

    def count(self, figure: str, by: int = 1) -> None:
        self.figures[figure] = self.figures.get(figure, 0) + by

    def violate(self, iteration: int, what: str) -> None:
        self.violations.append(f"seed {self.seed}, iteration {iteration}: {what}")

    def lines(self) -> list[str]:
        shown = ", ".join(f"{k} {v}" for k, v in self.figures.items())
        head = f"{self.name} (seed {self.seed}): {shown}; violations {len(self.violations)}"
        return [head, *(f"  VIOLATION {v}" for v in self.violations[:20])]


Policy = Callable[[list[dict[str, Any]], str, "Wire"], Scripted]


class Answering(Scripted):
    """A scripted answer that decides, from the request, what to answer."""

    def __init__(self, policy: Policy, wire: Wire) -> None:
        self.policy = policy
        self.wire = wire

    def serve(self, exchange: Exchange) -> None:
        body = exchange.body
        system = body.get("system", "")
        if isinstance(system, list):
            system = " ".join(str(part.get("text", "")) for part in system)
        messages = list(body.get("messages", []))
        if self.wire == "openai" and messages and messages[0].get("role") == "system":
            system = str(messages.pop(0).get("content", ""))
        self.policy(messages, str(system), self.wire).serve(exchange)


def campaign_workspace(root: Path, code: bool = False) -> Path:
    """A campaign's workspace: a git repository with ``notes.txt`` (and ``code.py``, with a
    function and a class, when ``code``)."""
    (root / "ws").mkdir(parents=True, exist_ok=True)
    workspace = git_repository(root / "ws")
    (workspace / "notes.txt").write_text("line one\nline two\n")
    if code:
        (workspace / "code.py").write_text("def f():\n    return 1\n\nclass C:\n    pass\n")
    return workspace


def stub_for(wire: Wire) -> LoopbackStub:
    return provider_stub.ProviderStub() if wire == "openai" else anthropic_stub.AnthropicStub()


def text(wire: Wire, content: str, delay_s: float = 0.0) -> Scripted:
    if wire == "openai":
        return provider_stub.text(content, chunk_size=8, delay_s=delay_s)
    return anthropic_stub.text(content, chunk_size=8, delay_s=delay_s)


def calls(wire: Wire, *made: tuple[str, dict[str, Any] | str]) -> Scripted:
    if wire == "openai":
        return provider_stub.tool_calls(*made)
    return anthropic_stub.tool_calls(*made)


@contextmanager
def answering(wire: Wire, policy: Policy, answers: int = 100_000) -> Iterator[LoopbackStub]:
    with stub_for(wire) as stub:
        one = Answering(policy, wire)
        stub.script(*([one] * answers))
        yield stub


def env_for(stub: LoopbackStub, wire: Wire, home: Path) -> dict[str, str]:
    env = server_env(stub, home)  # type: ignore[arg-type]
    env["TETHER_PROVIDER"] = wire
    return env


async def start(
    workspace: Path,
    stub: LoopbackStub,
    wire: Wire,
    home: Path,
    environment: Mapping[str, str] | None = None,
    **options: Any,
) -> Editor:
    """A server as an editor starts it (``environment``: more variables for it)."""
    settings = {"provider": {"max_retries": 0}, **options}
    env = env_for(stub, wire, home) | dict(environment or {})
    return await launch(workspace, env, options={"tether": settings})


def server_log(editor: Editor) -> list[str]:
    """The server's stderr from now on, line by line: what an editor shows a person in its
    output channel. It is still forwarded to this process's stderr, as pytest-lsp does."""
    lines: list[str] = []
    client = editor.client
    process = client._server
    if process is None or process.stderr is None:
        return lines
    stderr = process.stderr
    if client._stderr_forwarder is not None:
        client._stderr_forwarder.cancel()

    async def tee() -> None:
        while line := await stderr.readline():
            sys.stderr.buffer.write(line)
            lines.append(line.decode(errors="replace").rstrip("\n"))

    client._stderr_forwarder = asyncio.ensure_future(tee())
    return lines


def last_user_text(messages: list[dict[str, Any]]) -> str | None:
    """The newest words of the person (or the batch nudge), when the request ends with
    them; None when it ends with tool results alone or with the model's reply.

    The Anthropic wire holds strictly alternating turns, so words said after tool results,
    or after a prompt whose turn died before any reply (a kill, a cancel, a provider
    error), share one user turn with them: only its last text block was said now. The
    Chat Completions wire sends each as a message of its own; both wires read alike."""
    if not messages:
        return None
    last = messages[-1]
    if last.get("role") != "user":
        return None
    content = last.get("content")
    if isinstance(content, str):
        return content
    texts = [b.get("text", "") for b in content or [] if b.get("type") == "text"]
    return texts[-1] if texts else None


# -- the checks -------------------------------------------------------------------------


def check_history(history: dict[str, Any], parked: bool) -> list[str]:
    """Every call of the session answered exactly once, each answer right after its reply
    in call order; only a parked session's last reply may leave calls to its pending list."""
    problems: list[str] = []
    messages = history["messages"]
    pending = [p["call_id"] for p in history.get("pending", [])]
    at = 0
    while at < len(messages):
        message = messages[at]
        at += 1
        if message["role"] == "tool":
            problems.append(f"an answer to {message['call_id']} follows no reply of its own")
            continue
        wanted = [c["id"] for c in message.get("tool_calls") or []]
        answered = []
        while at < len(messages) and messages[at]["role"] == "tool":
            answered.append(messages[at]["call_id"])
            at += 1
        last = at == len(messages)
        if answered == wanted:
            continue
        if parked and last and answered == [c for c in wanted if c not in pending]:
            if not pending:
                problems.append("parked with nothing pending")
            continue
        problems.append(f"calls {wanted} answered by {answered} (pending {pending})")
    return problems


def check_request(body: dict[str, Any], wire: Wire) -> list[str]:
    """The provider was handed each call followed by exactly its results, in order."""
    problems: list[str] = []
    messages = body.get("messages", [])
    for at, message in enumerate(messages):
        if wire == "openai":
            ids = [c["id"] for c in message.get("tool_calls") or []]
            if not ids:
                continue
            following = messages[at + 1 : at + 1 + len(ids)]
            got = [m.get("tool_call_id") for m in following if m.get("role") == "tool"]
            if got != ids:
                problems.append(f"calls {ids} followed by results {got}")
        else:
            content = message.get("content")
            if message.get("role") != "assistant" or not isinstance(content, list):
                continue
            ids = [b["id"] for b in content if b.get("type") == "tool_use"]
            if not ids:
                continue
            nxt = messages[at + 1]["content"] if at + 1 < len(messages) else []
            got = [b.get("tool_use_id") for b in nxt if isinstance(b, dict)][: len(ids)]
            if got != ids:
                problems.append(f"tool_use {ids} followed by tool_result {got}")
    return problems


def shuffled(rng: random.Random, items: list[str]) -> list[str]:
    copy = list(items)
    rng.shuffle(copy)
    return copy


def as_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True)[:300]
