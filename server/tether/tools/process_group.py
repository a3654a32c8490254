"""A process group run to its end or killed whole: its output read as it comes and kept
as a head and a tail (a command printing gigabytes costs bounded memory), and a kill that
reaches everything it started (a new session on POSIX, a new process group on Windows)."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any, Literal

DRAIN_S = 1.0  # after the command exits, how long its output may stay open

Outcome = Literal["done", "timed_out", "held_open"]


class Capture:
    """The output's first and last ``keep`` characters, and what was cut between them."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.head = ""
        self.tail = ""
        self.cut_chars = 0
        self.cut_lines = 0

    def feed(self, data: bytes, final: bool = False) -> str:
        """Keep what must be kept of ``data``; returns it decoded."""
        text = decoded = self.decoder.decode(data, final)
        if len(self.head) < self.keep:
            room = self.keep - len(self.head)
            self.head, text = self.head + text[:room], text[room:]
        self.tail += text
        if len(self.tail) > 2 * self.keep:  # trimmed now and then, not on every chunk
            self._trim()
        return decoded

    def _trim(self) -> None:
        dropped, self.tail = self.tail[: -self.keep], self.tail[-self.keep :]
        self.cut_chars += len(dropped)
        self.cut_lines += dropped.count("\n")

    def text(self) -> str:
        self.feed(b"", final=True)
        if len(self.tail) > self.keep:
            self._trim()
        if not self.cut_chars:
            return (self.head + self.tail).rstrip("\n")
        # Cut at line breaks where there are any: whole lines either side of the note.
        head, tail = self.head, self.tail
        if (end := head.rfind("\n")) >= 0:
            self.cut_chars += len(head) - end - 1
            head = head[:end]
        if (start := tail.find("\n")) >= 0:
            self.cut_chars += start + 1
            self.cut_lines += 1
            tail = tail[start + 1 :]
        note = f"[… {self.cut_chars:,} characters ({self.cut_lines:,} lines) cut …]"
        return "\n".join((head, note, tail.rstrip("\n")))


class Watch(asyncio.SubprocessProtocol):
    """Feeds the output to a capture and to whoever watches it live; says when the process
    exited and the output closed."""

    def __init__(self, capture: Capture, live: Callable[[str], None]) -> None:
        self.capture = capture
        self.live = live
        self.exited = asyncio.Event()
        self.closed = asyncio.Event()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        if text := self.capture.feed(data):
            self.live(text)

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        self.closed.set()

    def process_exited(self) -> None:
        self.exited.set()


# Its own process group (a new session on POSIX), so a kill reaches all it starts.
NEW_GROUP: dict[str, Any]
if sys.platform == "win32":
    NEW_GROUP = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
else:
    NEW_GROUP = {"start_new_session": True}


async def kill_group(pid: int, watch: Watch) -> None:
    """Kill the process group, then take the output written before the kill, and the exit."""
    if sys.platform == "win32":
        taskkill = ["taskkill", "/T", "/F", "/PID", str(pid)]
        await asyncio.to_thread(subprocess.run, taskkill, capture_output=True, check=False)
    else:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)
    both = asyncio.gather(watch.exited.wait(), watch.closed.wait())
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(both, DRAIN_S)


async def finish(watch: Watch, limit_s: float) -> Outcome:
    """Wait for the command to exit and its output to close."""
    try:
        await asyncio.wait_for(watch.exited.wait(), limit_s)
    except TimeoutError:
        return "timed_out"
    try:
        await asyncio.wait_for(watch.closed.wait(), DRAIN_S)
    except TimeoutError:
        return "held_open"
    return "done"
