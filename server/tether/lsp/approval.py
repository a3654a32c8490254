"""The person at the editor, asked through ``window/showMessageRequest``."""

from __future__ import annotations

import logging
from typing import Any

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tether.agent.approval import Decision, NoApprovals
from tether.models import PendingCall

log = logging.getLogger(__name__)
EXTEND, STOP = "Extend", "Stop"


class LspApprover:
    def __init__(self, ls: Any) -> None:
        self.ls = ls

    def can_ask(self) -> bool:
        window = self.ls.client_capabilities.window
        request = window.show_message if window else None
        return bool(self.ls.settings.approval.dialogs and request and request.message_action_item)

    async def decide(self, session: str, call: PendingCall) -> Decision | None:
        # Approval dialogs for commands and patches arrive with the approval flow.
        return await NoApprovals().decide(session, call)

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        if not self.can_ask():
            return False
        step = self.ls.settings.turn.tool_budget
        message = (
            f"tether: this turn has a budget of {budget} tool calls, and the model's reply "
            f"goes {asked} past it. Allow {max(step, asked)} more? (Stop runs the calls that fit.)"
        )
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=message,
            actions=[types.MessageActionItem(title=EXTEND), types.MessageActionItem(title=STOP)],
        )
        try:
            answer = await self.ls.window_show_message_request_async(params)
        except JsonRpcException as exc:
            log.warning("the client could not show the budget question: %s", exc)
            return False
        return answer is not None and answer.title == EXTEND
