"""A turn's updates as ACP ``session/update`` notifications, in the order they happen.

The agent tells its updates synchronously (``Updates.send``); each becomes a notification
queued for one sender task, so none overtakes another, and the prompt's answer waits
until every update of its turn is sent (``flushed``).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentMessageChunk,
    TextContentBlock,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from tether.acp import calls
from tether.acp.link import Link
from tether.agent.events import (
    ApprovalUpdate,
    OutputUpdate,
    TextUpdate,
    ToolCallUpdate,
    ToolResultUpdate,
    Update,
)
from tether.agent.events import UsageUpdate as TetherUsage

log = logging.getLogger(__name__)
Notification = AgentMessageChunk | UserMessageChunk | ToolCallStart | ToolCallProgress | UsageUpdate


class AcpUpdates:
    """One session's ``Updates`` sink."""

    def __init__(self, link: Link, session: str, workspace: Path) -> None:
        self.link = link
        self.session = session
        self.workspace = workspace
        self.kinds: dict[str, calls.Kind] = {}  # call id -> its kind
        self.output: dict[str, str] = {}  # call id -> a running command's output so far
        self._queue: asyncio.Queue[Notification] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None

    def send(self, update: Update) -> None:
        for notification in self.notifications(update):
            self.notify(notification)

    def notify(self, notification: Notification) -> None:
        self._queue.put_nowait(notification)
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send_all())

    async def flushed(self) -> None:
        """Every update queued so far is sent (or the client has gone)."""
        await self._queue.join()

    async def _send_all(self) -> None:
        while True:
            notification = await self._queue.get()
            try:
                if self.link.conn is not None:
                    await self.link.conn.session_update(
                        session_id=self.session, update=notification
                    )
            except ConnectionError:
                pass  # the client has gone: the store keeps what it would have been told
            finally:
                self._queue.task_done()

    def notifications(self, update: Update) -> list[Notification]:
        match update:
            case TextUpdate(text=text):
                return [agent_text(text)]
            case ToolCallUpdate():
                return [self.started(update.call_id, update.tool, update.summary, update.arguments)]
            case ApprovalUpdate(call_id=call_id, decision="allowed"):
                return [ToolCallProgress(**progress(call_id), status="in_progress")]
            case OutputUpdate(call_id=call_id, text=text):
                self.output[call_id] = shown = self.output.get(call_id, "") + text
                self.output[call_id] = shown[-calls.MAX_SHOWN_CHARS :]  # the tail is shown
                content: list[Any] = [calls.text(self.output[call_id])]
                return [
                    ToolCallProgress(**progress(call_id), status="in_progress", content=content)
                ]
            case ToolResultUpdate():
                return [self.finished(update)]
            case TetherUsage(context_tokens=used, context_window=size) if size:
                return [UsageUpdate(session_update="usage_update", used=used, size=size)]
        return []  # the turn's status travels in the prompt's answer

    def started(
        self, call_id: str, tool: str, summary: str, arguments: dict[str, Any] | str
    ) -> ToolCallStart:
        self.kinds[call_id] = kind = calls.kind(tool)
        return ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=summary or tool,
            kind=kind,
            status="pending",
            locations=calls.locations(self.workspace, arguments),
            raw_input=arguments,
        )

    def finished(self, result: ToolResultUpdate) -> ToolCallProgress:
        output = self.output.pop(result.call_id, "")
        content: list[Any] = [calls.text(result.content)]
        if output and output not in result.content:
            content.insert(0, calls.text(output))
        edit = (
            self.link.edits.pop(self.session, None)
            if self.kinds.get(result.call_id) == "edit"
            else None
        )
        if edit is not None and result.status == "ok":
            content.append(calls.diff(edit))
        return ToolCallProgress(
            **progress(result.call_id),
            status=calls.status(result.status),
            content=content,
            raw_output={"status": result.status, "content": result.content},
        )


def progress(call_id: str) -> dict[str, Any]:
    return {"session_update": "tool_call_update", "tool_call_id": call_id}


def agent_text(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
    )


def user_text(text: str) -> UserMessageChunk:
    return UserMessageChunk(
        session_update="user_message_chunk", content=TextContentBlock(type="text", text=text)
    )
