"""A stdio server's stderr: every line to tether's log, the last few kept to say why the
server died.

The child writes into a pipe whose read end a thread drains (a blocking read works the same
on POSIX and Windows, where asyncio's pipes differ); each line is handed to the event loop,
which logs it and keeps it. Stdout is never touched: it belongs to JSON-RPC.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)
KEPT = 20  # lines kept to name in an error
LINE_CHARS = 1_000  # a line longer than this is cut: a server may write anything
DRAIN_S = 1.0  # how long an error waits for the last lines of a server that just died


class StderrTail:
    """One run of one server's stderr: ``file`` is handed to the child as its stderr."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.lines: deque[str] = deque(maxlen=KEPT)
        self._loop = asyncio.get_running_loop()
        self._ended = asyncio.Event()
        read_fd, write_fd = os.pipe()
        self.file = open(write_fd, "w", encoding="utf-8")  # noqa: SIM115 (closed in spawned)
        thread = threading.Thread(
            target=self._pump, args=(read_fd,), name=f"mcp-stderr-{server}", daemon=True
        )
        thread.start()

    def spawned(self) -> None:
        """The child holds its own copy of the write end: ours goes, so the pipe ends (and
        the thread with it) when the child's process tree ends."""
        if not self.file.closed:
            self.file.close()

    async def tail(self) -> str:
        """The last lines, once the server's stderr ended (or after ``DRAIN_S``)."""
        self.spawned()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(DRAIN_S):
                await self._ended.wait()
        return "\n".join(self.lines)

    def _pump(self, fd: int) -> None:
        with open(fd, "rb") as pipe:
            while raw := pipe.readline(LINE_CHARS):
                line = raw.decode("utf-8", "replace").rstrip("\r\n")
                if not self._told(self._keep, line):
                    return
        self._told(self._ended.set)

    def _told(self, callback: Callable[..., object], *args: object) -> bool:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop has closed: nobody is left to tell
            return False
        return True

    def _keep(self, line: str) -> None:
        if line:
            self.lines.append(line)
            log.info("MCP server %s: %s", self.server, line)


def said(server: str, tail: str) -> str:
    """What an error says of a server's last stderr lines (nothing when it wrote none)."""
    if not tail:
        return f"the MCP server {server!r} wrote nothing on stderr"
    return f"the last lines of the MCP server {server!r} on stderr:\n{tail}"
