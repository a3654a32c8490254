"""A running call's output, told to the editor as it comes (contract v2, kind ``output``).

A command may print a line a millisecond; the editor gets it in pieces at most every
``INTERVAL_S``, and a flood is cut to its latest ``MAX_PENDING`` characters per piece, so
the editor is never the bottleneck. The tail is kept for the call's answer when the call
never gives one itself (cancelled while it ran).
"""

from __future__ import annotations

import asyncio

from tether.agent.events import OutputUpdate, Updates

INTERVAL_S = 0.1
MAX_PENDING = 16_000  # characters sent in one piece at most
TAIL_CHARS = 4_000  # of the output, kept for an interrupted call's answer


class LiveOutput:
    def __init__(self, updates: Updates, session: str, call_id: str) -> None:
        self.updates = updates
        self.session = session
        self.call_id = call_id
        self.pending = ""
        self.skipped = 0  # characters of a flood that never reached the editor
        self.tail = ""
        self.timer: asyncio.TimerHandle | None = None

    def write(self, text: str) -> None:
        self.tail = (self.tail + text)[-TAIL_CHARS:]
        self.pending += text
        if len(self.pending) > 2 * MAX_PENDING:  # trimmed now and then, not on every write
            self.skipped += len(self.pending) - MAX_PENDING
            self.pending = self.pending[-MAX_PENDING:]
        if self.timer is None:
            self.timer = asyncio.get_running_loop().call_later(INTERVAL_S, self.flush)

    def flush(self) -> None:
        self.timer = None
        text, self.pending = self.pending, ""
        if len(text) > MAX_PENDING:
            self.skipped += len(text) - MAX_PENDING
            text = text[-MAX_PENDING:]
        if self.skipped:
            text = f"[… {self.skipped:,} characters not shown live …]\n{text}"
            self.skipped = 0
        if text:
            self.updates.send(OutputUpdate(session=self.session, call_id=self.call_id, text=text))

    def close(self) -> None:
        """The call ended: what is still pending goes now, before its result."""
        if self.timer is not None:
            self.timer.cancel()
        self.flush()
