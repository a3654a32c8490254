"""The person at the client, asked through ``session/request_permission``: the agent's
``Person`` seam over ACP.

ACP's four options map onto tether's answers: ``allow_once`` allows the call,
``allow_always`` allows it and remembers the rule tether offers for it (for this
workspace, as the LSP front's "Allow always"), ``reject_once`` denies it, and
``reject_always`` denies it and remembers the same rule as one that denies: later calls it
covers, in any session of the workspace and on either front, are denied unasked (the model
reads which rule denied them). Both "always" options are offered together, only where tether
can remember the call as shown. A ``cancelled`` outcome with no ``session/cancel``, or an
option that was not offered, leaves the call waiting, as a dismissed dialog does
(``tether approve`` or a later prompt decides).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from acp import RequestError
from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from tether.acp import calls
from tether.acp.link import Link
from tether.agent.approval import Answer, Question
from tether.errors import TetherError
from tether.models import PendingCall
from tether.tools.base import FileEdit

log = logging.getLogger(__name__)
Planned = Callable[[str, str], Awaitable[FileEdit]]  # (session, call id) -> its edit
ANSWERS: dict[str, Answer] = {
    "allow": "allow",
    "always": "always",
    "deny": "deny",
    "never": "never",
}


class AcpPerson:
    def __init__(self, link: Link) -> None:
        self.link = link
        self.planned: Planned | None = None  # the service's, once it is built

    def can_ask(self) -> bool:
        return self.link.conn is not None

    async def ask(self, session: str, question: Question) -> Answer | None:
        return await self.decide(session, question.call, question.preview, question.always)

    async def decide(
        self, session: str, call: PendingCall, preview: str, always: str | None
    ) -> Answer | None:
        """Ask about one call (``always``: what "Allow always" and "Deny always" remember,
        if they are offered)."""
        options = [PermissionOption(option_id="allow", name="Allow", kind="allow_once")]
        if always is not None:
            words = f"Allow always: {always}"
            options.append(PermissionOption(option_id="always", name=words, kind="allow_always"))
        options.append(PermissionOption(option_id="deny", name="Deny", kind="reject_once"))
        if always is not None:
            words = f"Deny always: {always}"
            options.append(PermissionOption(option_id="never", name=words, kind="reject_always"))
        content: list[Any] = [calls.text(preview)]
        if (edit := await self._edit(session, call.call_id)) is not None:
            content = [calls.diff(edit)]
        asked = ToolCallUpdate(
            tool_call_id=call.call_id,
            title=call.summary,
            kind=calls.kind(call.tool),
            status="pending",
            content=content,
            raw_input=call.arguments,
        )
        if (sink := self.link.sinks.get(session)) is not None:
            await sink.flushed()  # the call is shown before it is asked about
        answer = await self._request(session, asked, options)
        offered = {option.option_id for option in options}
        return ANSWERS[answer] if answer in offered else None

    async def _edit(self, session: str, call_id: str) -> FileEdit | None:
        if self.planned is None:
            return None
        try:
            return await self.planned(session, call_id)
        except TetherError:  # not a file edit, or one that no longer applies: the preview says
            return None

    async def _request(
        self, session: str, call: ToolCallUpdate, options: list[PermissionOption]
    ) -> str | None:
        conn = self.link.conn
        if conn is None:
            return None
        try:
            response = await conn.request_permission(
                session_id=session, tool_call=call, options=options
            )
        except RequestError as exc:
            log.warning("the client could not ask the person: %s", exc)
            return None
        except ConnectionError:
            # The client hung up: the turn is cancelled next (every call answered, as the
            # LSP front does at exit), so this call is not parked as if dismissed.
            await asyncio.Future()
            raise
        outcome = response.outcome
        return outcome.option_id if isinstance(outcome, AllowedOutcome) else None

    async def extend_budget(self, session: str, budget: int, asked: int) -> bool:
        return False  # ACP has no question but a call's: the calls that fit run

    async def allow_server(self, name: str, shown: str) -> bool:
        return False  # a repository's .mcp.json never starts a program from this front
