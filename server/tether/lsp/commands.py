"""The contract's commands: each validates its argument, calls the service, returns a model.

A handler is registered with ``@command(name, Argument)``; ``register`` hands them all
to the server. Commands that run a turn do it ``in_view``: where the editor can watch
and stop it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from tether.lsp.arguments import (
    AppliedArgument,
    ApproveArgument,
    Cancelled,
    DenyArgument,
    Forgotten,
    NoArgument,
    Planned,
    PlannedArgument,
    RuleArgument,
    RuleInfo,
    Rules,
    RunArgument,
    ScheduleArgument,
    Scheduled,
    SessionArgument,
    Sessions,
    SessionSummary,
    TaskArgument,
    TaskList,
    Unscheduled,
)
from tether.lsp.errors import Handler, json_rpc_errors
from tether.lsp.server import TetherServer
from tether.lsp.updates import LspUpdates
from tether.models import History, TurnResult


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


A = TypeVar("A", bound=BaseModel)
COMMANDS: list[tuple[str, Callable[..., Awaitable[Any]]]] = []


def command(name: str, argument: type[A]) -> Callable[[Handler[A]], Handler[A]]:
    def add(handler: Handler[A]) -> Handler[A]:
        COMMANDS.append((name, json_rpc_errors(argument)(handler)))
        return handler

    return add


def register(server: TetherServer) -> None:
    for name, handler in COMMANDS:
        server.command(name)(handler)


@command("tether.run", RunArgument)
async def run(ls: TetherServer, arg: RunArgument) -> TurnResult:
    session = ls.service.open(arg.prompt, arg.session)
    return await in_view(ls, session, arg.prompt, lambda u: ls.service.run(session, arg.prompt, u))


@command("tether.approve", ApproveArgument)
async def approve(ls: TetherServer, arg: ApproveArgument) -> TurnResult:
    go = ls.service.approve
    return await in_view(
        ls, arg.session, "approved", lambda u: go(arg.session, arg.calls, arg.remember, u)
    )


@command("tether.deny", DenyArgument)
async def deny(ls: TetherServer, arg: DenyArgument) -> TurnResult:
    go = ls.service.deny
    return await in_view(
        ls, arg.session, "denied", lambda u: go(arg.session, arg.calls, arg.reason, u)
    )


@command("tether.applied", AppliedArgument)
async def applied(ls: TetherServer, arg: AppliedArgument) -> TurnResult:
    """The person applied a waiting patch from its code action: record it, run on."""
    go = ls.service.applied
    return await in_view(ls, arg.session, "patch applied", lambda u: go(arg.session, arg.call, u))


@command("tether.cancel", SessionArgument)
async def cancel(ls: TetherServer, arg: SessionArgument) -> Cancelled:
    return Cancelled(cancelled=ls.service.cancel(arg.session, LspUpdates(ls, arg.session)))


@command("tether.sessions", NoArgument)
async def sessions(ls: TetherServer, arg: NoArgument) -> Sessions:
    listed = [
        SessionSummary(id=s.id, title=s.title, status=s.status, updated=s.updated)
        for s in ls.service.sessions()
    ]
    return Sessions(sessions=listed)


@command("tether.history", SessionArgument)
async def history(ls: TetherServer, arg: SessionArgument) -> History:
    return ls.service.history(arg.session)


@command("tether.planned", PlannedArgument)
async def planned(ls: TetherServer, arg: PlannedArgument) -> Planned:
    """The editor's diff of a waiting patch is the server's own plan, not a port of it."""
    edit = await ls.service.planned_edit(arg.session, arg.call)
    return Planned(path=str(edit.path), before=edit.before, after=edit.after)


@command("tether.rules", NoArgument)
async def rules(ls: TetherServer, arg: NoArgument) -> Rules:
    listed = [
        RuleInfo(
            id=str(rule.id),
            tool=rule.tool,
            match=rule.words,
            scope=rule.scope,
            session=rule.scope_id if rule.scope == "session" else None,
            created=rule.created,
        )
        for rule in ls.service.rules()
    ]
    return Rules(rules=listed)


@command("tether.forget", RuleArgument)
async def forget(ls: TetherServer, arg: RuleArgument) -> Forgotten:
    return Forgotten(removed=ls.service.forget(arg.rule))


@command("tether.schedule", ScheduleArgument)
async def schedule(ls: TetherServer, arg: ScheduleArgument) -> Scheduled:
    return Scheduled(task=ls.service.schedule(arg.prompt, arg.every, arg.session).id)


@command("tether.unschedule", TaskArgument)
async def unschedule(ls: TetherServer, arg: TaskArgument) -> Unscheduled:
    ls.service.unschedule(arg.task)
    return Unscheduled(removed=True)


@command("tether.tasks", NoArgument)
async def tasks(ls: TetherServer, arg: NoArgument) -> TaskList:
    return TaskList(tasks=ls.service.tasks())
