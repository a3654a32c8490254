"""The person at the editor, asked through ``window/showMessageRequest``: the agent's
``Person`` seam over LSP."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tether.agent.approval import Answer, Question
from tether.lsp.pygls_private import forget_request, send_as_given

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer

log = logging.getLogger(__name__)
ANSWERS: dict[str, Answer] = {"Allow": "allow", "Allow always": "always", "Deny": "deny"}
EXTEND, STOP = "Extend", "Stop"
ALLOW_SERVER, DENY_SERVER = "Allow", "Deny"


class LspPerson:
    def __init__(self, ls: TetherServer) -> None:
        self.ls = ls

    def can_ask(self) -> bool:
        # Contract v2: every client gets the dialog (messageActionItem only says whether
        # action items may carry more than a title); `approval.dialogs` turns it off.
        return self.ls.config.current.approval.dialogs

    async def ask(self, session: str, question: Question) -> Answer | None:
        call = question.call
        if question.always is not None:
            always = f"Allow always remembers, for this workspace: {question.always}"
            titles = list(ANSWERS)
        else:
            always = "(Allow always is not offered: this call cannot be remembered as shown.)"
            titles = [title for title, answer in ANSWERS.items() if answer != "always"]
        message = (
            f"tether wants to run {call.tool}: {call.summary}\n\n{question.preview}\n\n{always}"
        )
        title = await self._request(message, titles, call.call_id)
        return ANSWERS.get(title) if title else None

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        if not self.can_ask():
            return False
        step = max(self.ls.config.current.turn.tool_budget, asked)
        message = (
            f"tether: this turn has a budget of {budget} tool calls, and the model's reply "
            f"goes {asked} past it. Allow {step} more? (Stop runs the calls that fit.)"
        )
        return await self._request(message, [EXTEND, STOP]) == EXTEND

    async def allow_server(self, name: str, shown: str) -> bool:
        if not self.can_ask():
            return False
        message = (
            f"tether: this workspace's .mcp.json names the MCP server {name!r}, which runs:\n\n"
            f"{shown}\n\nStart it? Allow is remembered for this workspace until the entry "
            f"changes; a repository's file alone never starts a program."
        )
        return await self._request(message, [ALLOW_SERVER, DENY_SERVER]) == ALLOW_SERVER

    async def _request(
        self, message: str, actions: list[str], call_id: str | None = None
    ) -> str | None:
        items: list[dict[str, Any]] = [{"title": title} for title in actions]
        if call_id is not None and self._extra_properties():
            # A client pairs a dialog with its call by this id, never by the wording.
            items = [item | {"call_id": call_id} for item in items]
        warning = types.MessageType.Warning.value
        params: dict[str, Any] = {"type": warning, "message": message, "actions": items}
        msg_id = f"tether-ask-{uuid.uuid4().hex[:8]}"
        protocol = self.ls.protocol
        try:
            answer = await send_as_given(
                protocol, types.WINDOW_SHOW_MESSAGE_REQUEST, params, msg_id
            )
        except asyncio.CancelledError:
            # The turn ended while the dialog was open: take the question back.
            forget_request(protocol, msg_id)
            protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        except JsonRpcException as exc:
            log.warning("the client could not show the question: %s", exc)
            return None
        return _title(answer)

    def _extra_properties(self) -> bool:
        window = self.ls.client_capabilities.window
        request = window.show_message if window else None
        item = request.message_action_item if request else None
        return bool(item and item.additional_properties_support)


def _title(answer: object) -> str | None:
    """The chosen action's title, however the answer was structured."""
    if answer is None:
        return None
    if isinstance(answer, dict):
        title = answer.get("title")
        return title if isinstance(title, str) else None
    title = getattr(answer, "title", None)
    return title if isinstance(title, str) else None
