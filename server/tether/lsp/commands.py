"""The contract's commands: each validates its argument, calls the service, returns a model.

A handler is registered with ``@command(name, Argument)``; the server calls it through
its stand-in (``deferred``), once the service is built. Commands that run a turn do it
``in_view``: where the editor can watch and stop it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from lsprotocol import types
from pydantic import BaseModel

from tether.errors import TetherError
from tether.history import History, Rewound
from tether.lsp.arguments import (
    AppliedArgument,
    ApproveArgument,
    Cancelled,
    DenyArgument,
    Forgotten,
    NoArgument,
    Planned,
    PlannedArgument,
    RewindArgument,
    RuleArgument,
    RuleInfo,
    Rules,
    RunArgument,
    ScheduleArgument,
    Scheduled,
    ServerInfo,
    SessionArgument,
    Sessions,
    SessionSummary,
    Started,
    TaskArgument,
    TaskList,
    ToolInfo,
    Tools,
    Unscheduled,
)
from tether.lsp.errors import Handler, json_rpc_errors
from tether.lsp.server import TetherServer
from tether.lsp.updates import LspUpdates
from tether.models import TurnResult


async def in_view(
    ls: TetherServer,
    session: str,
    title: str,
    go: Callable[[LspUpdates], Awaitable[TurnResult]],
    wait: bool = True,
) -> TurnResult | Started:
    """Run a turn where the editor can watch and stop it: its updates, a cancellable
    progress, and ``$/cancelRequest`` on the request that started it.

    The turn claims its session in the very step that takes the request; its progress is
    set up beside it (a round trip to the editor). So from the moment the request is
    taken, a cancel by any route finds the turn and ends it: none is lost, none reaches
    the session's parked turn instead of this one. A ``$/cancelRequest`` that came before
    (pygls has answered it ``RequestCancelled``) starts no turn.

    With ``wait`` false the answer is ``Started`` as soon as the turn holds its session,
    and the turn runs on in the background; a turn that cannot run (busy, nothing
    waiting, an unknown call) is answered with its error all the same.
    """
    request = ls.protocol.msg_id
    if request in ls.early_cancels:
        return TurnResult(session=session, status="cancelled")
    updates = LspUpdates(ls, session)
    if wait:
        return await _watched(ls, request, updates, title, go)
    turn = asyncio.ensure_future(_watched(ls, None, updates, title, go))
    ls.background.add(turn)
    turn.add_done_callback(lambda done: _forget(ls, done))
    running = asyncio.ensure_future(updates.running.wait())
    try:
        await asyncio.wait([turn, running], return_when=asyncio.FIRST_COMPLETED)
    finally:
        running.cancel()
    return turn.result() if turn.done() else Started(session=session)


async def _watched(
    ls: TetherServer,
    request: Any,
    updates: LspUpdates,
    title: str,
    go: Callable[[LspUpdates], Awaitable[TurnResult]],
) -> TurnResult:
    session = updates.session
    if request is not None:
        ls.turn_requests[request] = session
    progress = asyncio.ensure_future(updates.begin(title))
    progress.add_done_callback(lambda begun: _follow(ls, session, begun))
    try:
        return await go(updates)
    finally:
        ls.turn_requests.pop(request, None)
        await asyncio.wait([progress])  # begun by now, or ended right after it begins
        updates.end("ended")
        if (token := _token(progress)) is not None:
            ls.progress_sessions.pop(token, None)
            ls.work_done_progress.tokens.pop(token, None)  # pygls keeps each one otherwise


def _forget(ls: TetherServer, turn: asyncio.Future[TurnResult]) -> None:
    """A background turn ended. Its refusal was the request's answer; anything else that
    escaped it is a bug, logged, since no request is left to carry it."""
    ls.background.discard(turn)
    if turn.cancelled() or (exc := turn.exception()) is None:
        return
    if isinstance(exc, TetherError):
        return  # a refusal (busy, nothing waiting, an unknown call): the request's answer
    log.error("a background turn failed", exc_info=exc)


def _token(progress: asyncio.Future[types.ProgressToken | None]) -> types.ProgressToken | None:
    return None if progress.cancelled() or progress.exception() else progress.result()


def _follow(
    ls: TetherServer, session: str, progress: asyncio.Future[types.ProgressToken | None]
) -> None:
    """Cancelling the progress cancels the turn, once the editor has the progress."""
    if (token := _token(progress)) is not None:
        ls.progress_sessions[token] = session


log = logging.getLogger(__name__)
A = TypeVar("A", bound=BaseModel)
COMMANDS: list[tuple[str, Callable[..., Awaitable[Any]]]] = []


def command(name: str, argument: type[A]) -> Callable[[Handler[A]], Handler[A]]:
    def add(handler: Handler[A]) -> Handler[A]:
        COMMANDS.append((name, json_rpc_errors(argument)(handler)))
        return handler

    return add


@command("tether.run", RunArgument)
async def run(ls: TetherServer, arg: RunArgument) -> TurnResult | Started:
    session = ls.service.open(arg.prompt, arg.session)
    go = ls.service.run
    return await in_view(ls, session, arg.prompt, lambda u: go(session, arg.prompt, u), arg.wait)


@command("tether.approve", ApproveArgument)
async def approve(ls: TetherServer, arg: ApproveArgument) -> TurnResult | Started:
    go = ls.service.approve
    return await in_view(
        ls, arg.session, "approved", lambda u: go(arg.session, arg.calls, arg.remember, u), arg.wait
    )


@command("tether.deny", DenyArgument)
async def deny(ls: TetherServer, arg: DenyArgument) -> TurnResult | Started:
    go = ls.service.deny
    return await in_view(
        ls, arg.session, "denied", lambda u: go(arg.session, arg.calls, arg.reason, u), arg.wait
    )


@command("tether.applied", AppliedArgument)
async def applied(ls: TetherServer, arg: AppliedArgument) -> TurnResult | Started:
    """The person applied a waiting patch from its code action: record it, run on."""
    go = ls.service.applied
    session, call = arg.session, arg.call
    return await in_view(ls, session, "patch applied", lambda u: go(session, call, u), arg.wait)


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
            verdict=rule.verdict,
        )
        for rule in ls.service.rules()
    ]
    return Rules(rules=listed)


@command("tether.tools", NoArgument)
async def tools(ls: TetherServer, arg: NoArgument) -> Tools:
    """The tools in force now: the built-in ones, and those of the MCP servers that have
    listed theirs; and each MCP server's state."""
    return Tools(
        tools=[
            ToolInfo(name=t.name, source=t.source, read_only=t.reads, description=t.description)
            for t in ls.service.in_force.listed()
        ],
        servers=[
            ServerInfo(name=name, state=s.state, tools=s.tools, detail=s.detail)
            for name, s in ls.service.mcp.states.items()
        ],
    )


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


@command("tether.rewind", RewindArgument)
async def rewind(ls: TetherServer, arg: RewindArgument) -> Rewound:
    """Take a turn back: its files, its conversation, or both (the transcript shows it)."""
    updates = LspUpdates(ls, arg.session)
    return await ls.service.rewind(arg.session, arg.turn, arg.what, updates)
