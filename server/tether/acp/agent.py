"""The ACP agent: one thin handler per method, each calling the service once.

``session/new`` makes a tether session in the workspace its ``cwd`` names; its id is the
ACP session id, so a session started here lists, loads and runs in the LSP front and the
terminal, and the other way round. ``session/prompt`` runs one turn and answers with how
it ended; ``session/cancel`` ends it as ``tether.cancel`` does.
"""

from __future__ import annotations

from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
)

from tether import __version__
from tether.acp.errors import INTERNAL_ERROR, answered
from tether.acp.link import SESSION, Link
from tether.acp.prompt import Block, prompt_text
from tether.acp.replay import replay
from tether.acp.updates import AcpUpdates, agent_text
from tether.acp.workspaces import Workspaces
from tether.agent.approval import never
from tether.errors import Refused
from tether.models import Scope, TurnResult
from tether.outbound import outbound
from tether.service import Service

PAGE = 100  # sessions a `session/list` answer holds
MAX_ID = 200  # characters of a session id: tether's are 12
STOP = {"done": "end_turn", "awaiting_approval": "end_turn", "cancelled": "cancelled"}
STOP |= {"stopped": "max_turn_requests"}
REMEMBERED = "tether's rule for this call, for this workspace"


class TetherAgent:
    def __init__(self, workspaces: Workspaces, link: Link) -> None:
        self.workspaces = workspaces
        self.link = link
        # Sessions whose prompt was cancelled: a cancel that comes while the prompt decides
        # waiting calls, or before its turn began, still ends the prompt `cancelled`.
        self.cancelled: set[str] = set()

    def on_connect(self, conn: Client) -> None:
        self.link.conn = conn

    @answered
    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        if client_capabilities is not None:
            self.link.capabilities = client_capabilities
        sessions = SessionCapabilities(
            list=SessionListCapabilities(), resume=SessionResumeCapabilities()
        )
        capabilities = AgentCapabilities(
            load_session=True,
            prompt_capabilities=PromptCapabilities(image=False, audio=False, embedded_context=True),
            session_capabilities=sessions,
        )
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,  # the one it speaks, whatever was asked
            agent_capabilities=capabilities,
            agent_info=Implementation(name="tether", title="tether", version=__version__),
            auth_methods=[],
        )

    @answered
    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> NewSessionResponse:
        service = self.workspaces.at(cwd)
        session = service.open("", None)
        self.workspaces.client_servers.name(service, session, mcp_servers)
        self.workspaces.joined(session, service)
        return NewSessionResponse(session_id=session)

    @answered
    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> LoadSessionResponse:
        service, sink = self._rejoin(cwd, session_id, mcp_servers)
        replay(service.history(session_id), sink)
        await sink.flushed()  # the history is told before the answer
        return LoadSessionResponse()

    @answered
    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None, **kwargs: Any
    ) -> ResumeSessionResponse:
        self._rejoin(cwd, session_id, mcp_servers)
        return ResumeSessionResponse()

    def _rejoin(
        self, cwd: str, session: str, mcp_servers: list[Any] | None
    ) -> tuple[Service, AcpUpdates]:
        if len(session) > MAX_ID:
            raise Refused(f"unknown session {session[:MAX_ID]!r}… ({len(session):,} characters)")
        service = self.workspaces.at(cwd)
        belongs = service.store.sessions.get(session).workspace
        if belongs != str(service.workspace):
            raise Refused(f"session {session!r} belongs to {belongs}, not to {cwd}")
        service.open("", session)  # made whole where a dead server left it
        self.workspaces.client_servers.name(service, session, mcp_servers)  # replaced
        return service, self.workspaces.joined(session, service)

    @answered
    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        service = self.workspaces.at(cwd) if cwd else self.workspaces.anywhere()
        listed = service.sessions(everywhere=cwd is None)
        start = _page_start(cursor, len(listed))
        page = listed[start : start + PAGE]
        sessions = [
            SessionInfo(session_id=s.id, cwd=s.workspace, title=s.title, updated_at=s.updated)
            for s in page
        ]
        more = start + PAGE < len(listed)
        return ListSessionsResponse(
            sessions=sessions, next_cursor=str(start + PAGE) if more else None
        )

    @answered
    async def prompt(self, session_id: str, prompt: list[Block], **kwargs: Any) -> PromptResponse:
        service = self.workspaces.of(session_id)
        sink = self.workspaces.joined(session_id, service)
        text = prompt_text(prompt, service.workspace)
        service.open(text, session_id)  # made whole, as the LSP front does before a turn
        service.name(session_id, text)  # a session made by session/new takes its first prompt
        token = SESSION.set(session_id)
        self.cancelled.discard(session_id)
        try:
            await self._decide_waiting(service, session_id, sink)
            if session_id in self.cancelled:
                result = TurnResult(session=session_id, status="cancelled")
            else:
                result = await service.run(session_id, text, sink)
        finally:
            SESSION.reset(token)
        return await self._ended(result, sink)

    async def _decide_waiting(self, service: Service, session: str, sink: AcpUpdates) -> None:
        """A session whose calls wait for a decision (parked here or in another front)
        asks about each first; what is allowed runs, and the turn goes on, in this prompt.
        A call left undecided is set aside by the new prompt, as in the LSP front."""
        person = self.workspaces.people[service.workspace]
        while session not in self.cancelled and (waiting := service.history(session).pending):
            call = waiting[0]
            answer = await person.decide(session, call, call.summary, REMEMBERED)
            if answer is None or session in self.cancelled:
                return
            if answer in ("deny", "never"):
                remembered: Scope | None = "workspace" if answer == "never" else None
                why = never(REMEMBERED) if remembered else None
                await service.deny(session, [call.call_id], why, sink, remembered)
            else:
                remember: Scope | None = "workspace" if answer == "always" else None
                await service.approve(session, [call.call_id], remember, sink)

    async def _ended(self, result: TurnResult, sink: AcpUpdates) -> PromptResponse:
        if result.status == "awaiting_approval" and result.pending:
            waiting = ", ".join(f"{p.tool}: {p.summary}" for p in result.pending)
            sink.notify(agent_text(f"\n\n[tether: waiting for a decision on {waiting}]"))
        await sink.flushed()  # every update of the turn is told before its answer
        if result.status == "error":
            raise RequestError(INTERNAL_ERROR, outbound(result.error or "the turn failed"))
        return PromptResponse(stop_reason=STOP[result.status])

    @answered
    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        if (service := self.workspaces.sessions.get(session_id)) is not None:
            self.cancelled.add(session_id)
            service.cancel(session_id, self.workspaces.joined(session_id, service))


def _page_start(cursor: str | None, listed: int) -> int:
    """Where the page a cursor names starts (the cursor is that index, as text)."""
    if cursor is None:
        return 0
    if not (cursor.isascii() and cursor.isdigit()) or int(cursor) > listed:
        raise Refused(f"cursor {cursor[:100]!r} is not one session/list gave")
    return int(cursor)
