"""A running command's output as it streamed (``tether/update`` kind ``output``): its last
lines, how many there were, and the line that has not ended yet.

Kept apart from the console, which decides where these lines go (a window redrawn in place
on a terminal, line by line elsewhere): this is only the counting.
"""

from __future__ import annotations

from collections import deque

from tether.terminal.screen_text import output_line

TAIL = 5  # lines of a command's output left on screen


class Output:
    """A command's output as it streamed: its last lines, how many, and the line that has
    not ended yet."""

    def __init__(self) -> None:
        self.last_lines: deque[str] = deque(maxlen=TAIL)
        self.lines = 0  # complete lines so far
        self.partial = ""

    def feed(self, delta: str) -> list[str]:
        """Take more output; the lines it completed, as they may be shown."""
        *done, self.partial = (self.partial + delta).split("\n")
        shown = [output_line(line) for line in done]
        self.last_lines.extend(shown)
        self.lines += len(shown)
        return shown

    def last(self, n: int) -> list[str]:
        rows = [*self.last_lines, *([output_line(self.partial)] if self.partial else [])]
        return rows[-n:]

    def total(self) -> int:
        return self.lines + (1 if self.partial else 0)
