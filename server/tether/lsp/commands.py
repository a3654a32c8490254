"""The contract's commands: each validates its argument, calls the service, returns a model."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import BaseModel, ConfigDict, Field

from tether.lsp.errors import json_rpc_errors
from tether.lsp.server import TetherServer
from tether.lsp.updates import LspUpdates
from tether.models import History, Scope, Task, TurnResult


class Argument(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunArgument(Argument):
    prompt: str = Field(min_length=1)
    session: str | None = None


class SessionArgument(Argument):
    session: str


class NoArgument(Argument):
    pass


class ApproveArgument(Argument):
    session: str
    calls: list[str] | None = None
    remember: Scope | None = None


class DenyArgument(Argument):
    session: str
    calls: list[str] | None = None
    reason: str | None = None


class AppliedArgument(Argument):
    session: str
    call: str


class ScheduleArgument(Argument):
    prompt: str = Field(min_length=1)
    every: str
    session: str | None = None


class TaskArgument(Argument):
    task: str


class Scheduled(BaseModel):
    task: str


class Unscheduled(BaseModel):
    removed: bool


class TaskList(BaseModel):
    tasks: list[Task]


class Cancelled(BaseModel):
    cancelled: bool


class Sessions(BaseModel):
    sessions: list[dict[str, str]]


async def in_view(
    ls: TetherServer, session: str, title: str, go: Callable[[LspUpdates], Awaitable[TurnResult]]
) -> TurnResult:
    """Run a turn where the editor can watch and stop it: its updates, a cancellable
    progress, and ``$/cancelRequest`` on the request that started it."""
    request = ls.protocol.msg_id
    if request in ls.early_cancels:
        return TurnResult(session=session, status="cancelled")
    updates = LspUpdates(ls, session)
    ls.turn_requests[request] = session
    token = None
    try:
        token = await updates.begin(title)
        ls.progress_sessions[token] = session
        return await go(updates)
    finally:
        updates.end("ended")
        ls.turn_requests.pop(request, None)
        ls.progress_sessions.pop(token, None)


def register(server: TetherServer) -> None:
    @server.command("tether.run")
    @json_rpc_errors(RunArgument)
    async def run(ls: TetherServer, arg: RunArgument) -> TurnResult:
        session = ls.service.open(arg.prompt, arg.session)
        return await in_view(
            ls, session, arg.prompt, lambda updates: ls.service.run(session, arg.prompt, updates)
        )

    @server.command("tether.approve")
    @json_rpc_errors(ApproveArgument)
    async def approve(ls: TetherServer, arg: ApproveArgument) -> TurnResult:
        return await in_view(
            ls,
            arg.session,
            "approved",
            lambda updates: ls.service.approve(arg.session, arg.calls, arg.remember, updates),
        )

    @server.command("tether.deny")
    @json_rpc_errors(DenyArgument)
    async def deny(ls: TetherServer, arg: DenyArgument) -> TurnResult:
        return await in_view(
            ls,
            arg.session,
            "denied",
            lambda updates: ls.service.deny(arg.session, arg.calls, arg.reason, updates),
        )

    @server.command("tether.applied")
    @json_rpc_errors(AppliedArgument)
    async def applied(ls: TetherServer, arg: AppliedArgument) -> TurnResult:
        # The person applied a pending patch from its code action: record it, run on.
        return await in_view(
            ls, arg.session, "patch applied", lambda u: ls.service.applied(arg.session, arg.call, u)
        )

    @server.command("tether.cancel")
    @json_rpc_errors(SessionArgument)
    async def cancel(ls: TetherServer, arg: SessionArgument) -> Cancelled:
        return Cancelled(cancelled=ls.service.cancel(arg.session, LspUpdates(ls, arg.session)))

    @server.command("tether.sessions")
    @json_rpc_errors(NoArgument)
    async def sessions(ls: TetherServer, arg: NoArgument) -> Sessions:
        listed = [
            s.model_dump(include={"id", "title", "status", "updated"})
            for s in ls.service.sessions()
        ]
        return Sessions(sessions=listed)

    @server.command("tether.schedule")
    @json_rpc_errors(ScheduleArgument)
    async def schedule(ls: TetherServer, arg: ScheduleArgument) -> Scheduled:
        return Scheduled(task=ls.service.schedule(arg.prompt, arg.every, arg.session).id)

    @server.command("tether.unschedule")
    @json_rpc_errors(TaskArgument)
    async def unschedule(ls: TetherServer, arg: TaskArgument) -> Unscheduled:
        ls.service.unschedule(arg.task)
        return Unscheduled(removed=True)

    @server.command("tether.tasks")
    @json_rpc_errors(NoArgument)
    async def tasks(ls: TetherServer, arg: NoArgument) -> TaskList:
        return TaskList(tasks=ls.service.tasks())

    @server.command("tether.history")
    @json_rpc_errors(SessionArgument)
    async def history(ls: TetherServer, arg: SessionArgument) -> History:
        return ls.service.history(arg.session)
