"""A stored session told again as ``session/update``s (``session/load``): prompts, answers,
each call with its result; a call still waiting for a decision is left ``pending``."""

from __future__ import annotations

from typing import Any

from acp.schema import ToolCallProgress

from tether.acp import calls
from tether.acp.updates import AcpUpdates, Notification, agent_text, progress, user_text
from tether.history import History, HistoryAssistant, HistoryTool, HistoryUser


def replay(history: History, sink: AcpUpdates) -> None:
    for message in history.messages:
        for notification in _told(message, sink):
            sink.notify(notification)


def _told(
    message: HistoryUser | HistoryAssistant | HistoryTool, sink: AcpUpdates
) -> list[Notification]:
    match message:
        case HistoryUser(content=content):
            return [user_text(content)]
        case HistoryAssistant(content=content, tool_calls=wired):
            told: list[Notification] = [agent_text(content)] if content else []
            for call in wired or []:
                told.append(
                    sink.started(
                        call.id, call.name, calls.title(call.name, call.arguments), call.arguments
                    )
                )
            return told
        case HistoryTool():
            result: list[Any] = [calls.text(message.content)]
            status = calls.status(message.status)
            return [ToolCallProgress(**progress(message.call_id), status=status, content=result)]
    return []
