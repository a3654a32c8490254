"""What ``tether ask`` shows: the answer on stdout, the rest of the transcript on stderr.

Colour only when stderr is a terminal and ``NO_COLOR`` is unset. Questions are read
from the terminal without blocking the event loop; with no terminal they go unanswered.

A running command's output (``tether/update`` kind ``output``) shows dimmed as it comes:
on a terminal as a window of its last lines, redrawn in place, that leaves its tail once
the command ends; elsewhere (a pipe, a log) line by line. A command whose output did not
stream and failed shows the tail of its result instead. One line per call: a denial is the
``✗ denied`` line with its reason, not an approval line and a result line.

The console decides what goes where; the text it may write is ``screen_text.py``'s, a
command's streamed lines are counted by ``command_output.py``, and what the person types is
read by ``keyboard.py``.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from typing import Any

from tether.terminal.command_output import TAIL, Output
from tether.terminal.keyboard import chosen, read_line_in_thread
from tether.terminal.screen_text import cut, output_line, visible

EXIT_CODES = {"done": 0, "awaiting_approval": 3, "cancelled": 130, "stopped": 1, "error": 1}
STYLES = {"dim": "2", "ok": "32", "bad": "31", "ask": "33"}
OUTPUT = "    │ "  # the margin of a command's output


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
        self.summaries: dict[str, str] = {}  # call_id -> what the call does, in words
        self.outputs: dict[str, Output] = {}  # call_id -> the output it has streamed
        # Redraw a window of output in place: only on a terminal that takes cursor moves.
        self.redraw = sys.stderr.isatty() and os.environ.get("TERM") != "dumb"
        self.drawn = 0  # rows of output window on screen, just above the cursor
        self.reading: asyncio.Future[str] | None = None  # a line being read from the terminal

    def text(self, delta: str) -> None:
        self.settle()
        delta = visible(delta)
        sys.stdout.write(delta)
        sys.stdout.flush()
        if delta:
            self.open_line = not delta.endswith("\n")

    def end_text(self) -> None:
        if self.open_line:
            self.text("\n")

    def note(self, line: str, style: str | None = "dim") -> None:
        self.settle()
        if self.open_line and sys.stdout.isatty():  # one screen: keep notes off the answer's line
            self.end_text()
        print(self.paint(visible(line), style), file=sys.stderr, flush=True)

    def paint(self, line: str, style: str | None) -> str:
        return f"\x1b[{STYLES[style]}m{line}\x1b[0m" if self.color and style else line

    def update(self, update: dict[str, Any]) -> None:
        """Render one ``tether/update`` (the turn's end is the outcome's to say)."""
        kind, call_id = update.get("kind"), update.get("call_id", "")
        if kind == "text":
            self.text(update["text"])
        elif kind == "tool_call":
            if call_id in self.calls:  # a parked call, announced again as its turn resumes
                return
            self.calls[call_id] = update["tool"]
            self.summaries[call_id] = update["summary"]
            self.note(f"  → {update['tool']}: {update['summary']}")
        elif kind == "output":
            self.output(call_id, update["text"])
        elif kind == "tool_result":
            self.result(update)
        elif kind == "approval":
            self.summaries[call_id] = update["summary"]
            # "pending" comes before the dialog, or the outcome's list, that says it; a
            # denial is said once, by its result.
            if update["decision"] == "allowed":
                self.note(f"  ✓ allowed: {update['tool']}: {update['summary']}", "ask")
        elif kind == "status" and update["status"] not in ("running", *EXIT_CODES):
            self.note(f"  · {update['status']}" + (f": {d}" if (d := update.get("detail")) else ""))

    def result(self, update: dict[str, Any]) -> None:
        call_id, status = update.get("call_id", ""), update["status"]
        tool = self.calls.pop(call_id, update["tool"])
        summary = self.summaries.pop(call_id, None)
        content = update["content"]
        streamed = self.outputs.pop(call_id, None)
        if streamed is not None or (tool == "command" and status != "ok"):
            self.tail(streamed, content)
        if status == "ok":
            self.note(f"  ✓ {tool}", "ok")
        elif status == "denied":
            reason = content.removeprefix("denied: ").strip()
            what = f"{tool}: {summary}" if summary else tool
            self.note(f"  ✗ denied: {what}" + (f" ({reason})" if reason else ""), "bad")
        else:
            first = next(iter(content.strip().splitlines()), status)
            self.note(f"  ✗ {tool}: {first}", "bad")

    def output(self, call_id: str, delta: str) -> None:
        """A running command's output, as it comes."""
        output = self.outputs.setdefault(call_id, Output())
        lines = output.feed(delta)
        if self.redraw:
            self.draw(output.last(TAIL))
        else:
            for line in lines:
                self.note(OUTPUT + line)

    def tail(self, streamed: Output | None, content: str) -> None:
        """A command has ended: its last lines stay. On a terminal its window gives way to
        them; elsewhere its lines were printed as they came, all but an unfinished last
        one. Output that did not stream is the result's own, after its first line (``exit
        code: N``)."""
        if streamed is None or not streamed.total():
            streamed = Output()
            if rest := "\n".join(content.splitlines()[1:]):
                streamed.feed(rest + "\n")
        elif not self.redraw:
            if streamed.partial:
                self.note(OUTPUT + output_line(streamed.partial))
            return
        shown = streamed.last(TAIL)
        hidden = streamed.total() - len(shown)
        self.settle()
        if hidden > 0:
            self.note(f"{OUTPUT}… {hidden} more line{'s' if hidden > 1 else ''}")
        for line in shown:
            self.note(OUTPUT + line)

    def draw(self, rows: list[str]) -> None:
        """The output window, redrawn where it was: each row cut to the terminal's width,
        so that rows on screen are rows counted."""
        self.settle()
        width = max(shutil.get_terminal_size().columns - 1, len(OUTPUT) + 10)
        for row in rows:
            sys.stderr.write(self.paint(cut(OUTPUT + row, width), "dim") + "\n")
        sys.stderr.flush()
        self.drawn = len(rows)

    def settle(self) -> None:
        """Take the output window off the screen: what comes next is written in its place."""
        if self.drawn:
            sys.stderr.write(f"\x1b[{self.drawn}F\x1b[J")
            sys.stderr.flush()
            self.drawn = 0

    def outcome(self, result: dict[str, Any]) -> int:
        """Close the transcript of a turn; its exit code."""
        status, session = result.get("status", "error"), result.get("session")
        if status == "done" and not self.open_line and result.get("answer"):
            self.text(result["answer"])  # nothing was streamed: show the answer whole
        self.end_text()
        if status in ("awaiting_approval", "cancelled", "stopped"):
            self.note(f"  · {status}")
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
        """Ask which of ``titles`` (an index), or None: dismissed, or no terminal to ask on.
        A number, a title, or y / n (the first action, the last) answers."""
        self.note(message, "ask")
        for number, title in enumerate(titles, 1):
            self.note(f"    {number}) {title}", None)
        while titles:
            try:
                prompt = f"  choose 1-{len(titles)}, y or n (Enter: decide later) "
                answer = await self.read_line(prompt)
            except asyncio.CancelledError:
                self.note("  (the question was taken back)")
                raise
            if not answer:
                break
            if (choice := chosen(answer, titles)) is not None:
                return choice
        self.note("  left pending", None)
        return None

    async def reason(self) -> str | None:
        """Why the person denies a call, for the model; None: no reason given."""
        try:
            said = await self.read_line("  why? the model reads it (Enter: none) ", lower=False)
        except asyncio.CancelledError:
            self.note("  (the question was taken back)")
            raise
        return said or None

    async def read_line(self, prompt: str, lower: bool = True) -> str | None:
        """A line typed at the terminal, stripped (and lower-cased); None with no terminal
        or at EOF."""
        if not sys.stdin.isatty():
            return None
        self.settle()
        print(prompt, end="", file=sys.stderr, flush=True)
        if self.reading is None or self.reading.done():
            self.reading = read_line_in_thread()
        # Shielded: a question taken back leaves its pending read to the next question.
        line = (await asyncio.shield(self.reading)).strip()
        return (line.lower() if lower else line) or None
