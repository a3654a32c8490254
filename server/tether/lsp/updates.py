"""A turn's progress, told to the editor: ``tether/update`` notifications, and a
cancellable ``$/progress`` where the client supports it."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tether.agent.events import (
    ApprovalUpdate,
    OutputUpdate,
    StatusUpdate,
    TextUpdate,
    ToolCallUpdate,
    Update,
)
from tether.lsp.pygls_private import COMMAND_PROGRESS
from tether.outbound import outbound, outbound_json

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer

log = logging.getLogger(__name__)
UPDATE = "tether/update"
# A reply's text deltas are sent together, one notification per this long at most: a
# model streams a few characters at a time, and each notification costs its JSON.
COALESCE_S = 0.016


class LspUpdates:
    """``tether/update`` notifications, and the turn's ``$/progress`` when the client has it."""

    def __init__(self, ls: TetherServer, session: str, announce: bool = False) -> None:
        self.ls = ls
        self.session = session
        self.token: types.ProgressToken | None = None
        self.announce = announce  # a scheduled turn: say aloud what waits for the person
        self.calls: dict[str, tuple[str, float]] = {}  # call id -> (tool, started)
        self.reported = 0.0  # when the progress last said a command's state
        self._text: list[str] = []  # text deltas not sent yet
        self._flushing: asyncio.TimerHandle | None = None
        self.running = asyncio.Event()  # the turn holds its session: it is under way

    async def begin(self, title: str) -> types.ProgressToken | None:
        """Start the turn's progress; returns its token, None where the client has none.
        A token the client sent with its request is used as it is (no round trip)."""
        token = COMMAND_PROGRESS.get()
        if token is None:
            capabilities = self.ls.client_capabilities.window
            if not (capabilities and capabilities.work_done_progress):
                return None
            token = f"tether-{uuid.uuid4().hex[:8]}"
            try:
                await self.ls.work_done_progress.create_async(token)
            except JsonRpcException as exc:  # a client that refuses progress gets its turn
                log.info("client refused a progress token: %s", exc)
                return None
        self.token = token
        self.ls.work_done_progress.begin(
            token, types.WorkDoneProgressBegin(title="tether", message=title[:80], cancellable=True)
        )
        return token

    def send(self, update: Update) -> None:
        if isinstance(update, TextUpdate) and update.session == self.session:
            self._text.append(update.text)
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no loop to flush it later (not while serving): now
                self.flush()
                return
            if self._flushing is None:
                self._flushing = loop.call_later(COALESCE_S, self.flush)
            return
        self.flush()  # the text before it goes first: the editor sees them in order
        self.ls.protocol.notify(UPDATE, outbound_json(update.model_dump(mode="json")))
        if isinstance(update, StatusUpdate) and update.status == "running":
            self.running.set()
        if self.announce and isinstance(update, ApprovalUpdate) and update.decision == "pending":
            message = (
                f"tether: a scheduled task waits for your approval: {update.tool}: "
                f"{update.summary} (session {update.session}; approve with a code action "
                "or tether.approve)"
            )
            params = types.ShowMessageParams(type=types.MessageType.Warning, message=message)
            self.ls.window_show_message(params)
        if self.token is None:
            return
        if isinstance(update, ToolCallUpdate):
            self.calls[update.call_id] = (update.tool, time.monotonic())
            self.report(f"{update.tool}: {update.summary}")
        elif isinstance(update, OutputUpdate):
            self.command_state(update)
        elif isinstance(update, StatusUpdate) and update.status != "running":
            self.end(update.status)

    def flush(self) -> None:
        """Send the text deltas held back, as one."""
        if self._flushing is not None:
            self._flushing.cancel()
            self._flushing = None
        if self._text:
            text, self._text = "".join(self._text), []
            update = TextUpdate(session=self.session, text=text)
            self.ls.protocol.notify(UPDATE, outbound_json(update.model_dump(mode="json")))

    def command_state(self, update: OutputUpdate) -> None:
        """A running command's elapsed time and last line, twice a second at most."""
        tool, started = self.calls.get(update.call_id, ("command", time.monotonic()))
        now = time.monotonic()
        lines = [line for line in update.text.splitlines() if line.strip()]
        if not lines or now - self.reported < 0.5:
            return
        self.reported = now
        self.report(f"{tool} ({now - started:.0f} s): {lines[-1][:80]}")

    def report(self, message: str) -> None:
        if self.token is not None:
            self.ls.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=outbound(message))
            )

    def end(self, message: str) -> None:
        """End the progress if it is still open (a turn that never started ends it too)."""
        if self.token is not None:
            self.ls.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message=message))
            self.token = None
