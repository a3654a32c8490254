"""What ``tether ask`` shows: the answer on stdout, the rest of the transcript on stderr.

Colour only when stderr is a terminal and ``NO_COLOR`` is unset. Questions are read
from the terminal without blocking the event loop; with no terminal they go unanswered.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
import threading
from datetime import datetime
from pathlib import Path
from typing import Any

from tether.outbound import outbound

# Control characters move the cursor, erase lines and recolour the terminal: in text the
# model wrote they could disguise what a prompt asks about. Only \n and \t stay.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` as it may reach the terminal: control characters shown as escapes
    (``\x1b``), secrets redacted, lone surrogates escaped."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m[0]):02x}", outbound(text))


EXIT_CODES = {"done": 0, "awaiting_approval": 3, "cancelled": 130, "stopped": 1, "error": 1}
STYLES = {"dim": "2", "ok": "32", "bad": "31", "ask": "33"}
MARKS = {"pending": "?", "allowed": "✓", "denied": "✗"}


def plain(value: Any) -> Any:
    """Custom-notification params arrive as namedtuples: make them JSON-like again."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return [plain(v) for v in value] if isinstance(value, list | tuple) else value


class Console:
    def __init__(self) -> None:
        self.color = sys.stderr.isatty() and not os.environ.get("NO_COLOR")
        self.open_line = False  # streamed text still waiting for its final newline
        self.calls: dict[str, str] = {}  # call_id -> tool: results pair with calls by id
        self.reading: asyncio.Future[str] | None = None  # a line being read from the terminal

    def text(self, delta: str) -> None:
        delta = visible(delta)
        sys.stdout.write(delta)
        sys.stdout.flush()
        if delta:
            self.open_line = not delta.endswith("\n")

    def end_text(self) -> None:
        if self.open_line:
            self.text("\n")

    def note(self, line: str, style: str | None = "dim") -> None:
        if self.open_line and sys.stdout.isatty():  # one screen: keep notes off the answer's line
            self.end_text()
        line = visible(line)
        if self.color and style:
            line = f"\x1b[{STYLES[style]}m{line}\x1b[0m"
        print(line, file=sys.stderr, flush=True)

    def update(self, update: dict[str, Any]) -> None:
        """Render one ``tether/update``."""
        kind, call_id = update.get("kind"), update.get("call_id", "")
        if kind == "text":
            self.text(update["text"])
        elif kind == "tool_call":
            self.calls[call_id] = update["tool"]
            self.note(f"  → {update['tool']}: {update['summary']}")
        elif kind == "tool_result":
            tool = self.calls.pop(call_id, update["tool"])
            if update["status"] == "ok":
                self.note(f"  ✓ {tool}", "ok")
            else:
                first = next(iter(update["content"].strip().splitlines()), update["status"])
                self.note(f"  ✗ {tool}: {first}", "bad")
        elif kind == "approval":
            mark = MARKS.get(update["decision"], "·")
            self.note(
                f"  {mark} {update['decision']}: {update['tool']}: {update['summary']}", "ask"
            )
        elif kind == "status" and update["status"] not in ("running", "done", "error"):
            # A turn's last status gets its word; the outcome then says why, in full.
            detail = None if update["status"] in EXIT_CODES else update.get("detail")
            self.note(f"  · {update['status']}" + (f": {detail}" if detail else ""))

    def outcome(self, result: dict[str, Any]) -> int:
        """Close the transcript of a turn; its exit code."""
        status, session = result.get("status", "error"), result.get("session")
        if status == "done" and not self.open_line and result.get("answer"):
            self.text(result["answer"])  # nothing was streamed: show the answer whole
        self.end_text()
        if result.get("error"):
            self.note(f"tether: {status}: {result['error']}", "bad")
        for call in result.get("pending") or []:
            self.note(f"  waiting for approval: {call['tool']}: {call['summary']}", "ask")
        if status == "awaiting_approval":
            self.note(
                f"decide with `tether approve {session}` or `tether deny {session} --reason …` "
                f"(or from your editor), or go on without them: tether ask --session {session} "
                "PROMPT",
                None,
            )
        self.note(f"session: {session}", None)
        return EXIT_CODES.get(status, 1)

    async def choose(self, message: str, titles: list[str]) -> int | None:
        """Ask which of ``titles`` (an index), or None: dismissed, or no terminal to ask on."""
        self.note(message, "ask")
        for number, title in enumerate(titles, 1):
            self.note(f"    {number}) {title}", None)
        while titles:
            try:
                answer = await self.read_line(f"  choose 1-{len(titles)} (Enter: decide later) ")
            except asyncio.CancelledError:
                self.note("  (the question was taken back)")
                raise
            if not answer:
                break
            for index, title in enumerate(titles):
                if answer in (str(index + 1), title.lower()):
                    return index
        self.note("  left pending", None)
        return None

    async def read_line(self, prompt: str) -> str | None:
        """A line typed at the terminal, stripped, lower-cased; None with no terminal or at EOF."""
        if not sys.stdin.isatty():
            return None
        print(prompt, end="", file=sys.stderr, flush=True)
        if self.reading is None or self.reading.done():
            self.reading = _read_line_in_thread()
        # Shielded: a question taken back leaves its pending read to the next question.
        return (await asyncio.shield(self.reading)).strip().lower() or None

    def rules(self, listed: list[dict[str, Any]], workspace: Path) -> None:
        """The remembered approvals, one a line, with what each covers."""
        if not listed:
            self.note(f"no remembered approvals in {workspace}", None)
            return
        for rule in listed:
            where = f"session {rule['session']}" if rule.get("session") else "workspace"
            line = f"{rule['id']:>4}  {rule['tool']:<8} {where:<20} {rule['match']}"
            print(visible(line))
        self.note("forget one with `tether forget ID`", None)

    def sessions(self, listed: list[dict[str, Any]], workspace: Path) -> None:
        """A table of sessions, newest first."""
        if not listed:
            self.note(f"no sessions yet in {workspace}", None)
            return
        rows = [("ID", "STATUS", "UPDATED", "TITLE")] + [
            (s["id"], s["status"], _local_time(s["updated"]), re.sub(r"\s+", " ", s["title"]))
            for s in sorted(listed, key=lambda s: str(s["updated"]), reverse=True)
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(3)]
        for row in rows:
            cells = [*(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)), row[3]]
            print(visible("  ".join(cells)))


def _read_line_in_thread() -> asyncio.Future[str]:
    """The next line of stdin ("" at EOF), read without blocking the event loop."""
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        text = sys.stdin.readline()

        def give() -> None:
            if not line.done():
                line.set_result(text)

        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(give)

    # A daemon thread rather than the executor: a read still blocked at exit (the
    # question was taken back when the turn was cancelled) must not hold the exit up.
    threading.Thread(target=read, daemon=True).start()
    return line


def _local_time(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp
