"""``tether ask``, ``approve``, ``deny``: the terminal as an LSP client of the ``tether
serve`` that ``launch.py`` started (``sessions``, ``rules`` and ``forget`` need no server:
``from_store.py``).

It drives the server exactly as an editor does: ``initialize`` (``clientInfo.name`` is
``tether ask``, ``tether approve``…: the server runs no scheduled task for these
short-lived clients), then ``workspace/executeCommand``. A turn (``tether.run``,
``tether.approve``, ``tether.deny``) is started with ``"wait": false``: the result names
the session at once, and the turn's end arrives as the ``tether/update`` of kind
``status`` that carries its TurnResult. Only that session's updates are shown
(``console.py``); the approval dialog (``window/showMessageRequest``) is answered at the
terminal, and a denial with a reason is sent as ``tether.deny``; ``workspace/applyEdit`` is
applied to disk (``disk_edits.py``); then ``shutdown`` and ``exit``. Ctrl-C cancels the
turn; a second Ctrl-C quits at once.

Exit codes: 0 done; 1 error, stopped, or a server that failed; 3 awaiting approval;
130 cancelled. The environment it reads is listed by ``tether ask --help``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import subprocess
import sys
import threading
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException, JsonRpcRequestCancelled
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient

from tether import __version__
from tether.errors import ServerFailed
from tether.terminal import disk_edits, wire
from tether.terminal.console import EXIT_CODES, Console, plain
from tether.terminal.screen_text import visible

T = TypeVar("T")
DENY = "Deny"
RESULT_GRACE_S = 0.5  # how long an end without its result waits for one with it
log = logging.getLogger(__name__)


class Terminal:
    def __init__(self, workspace: Path, debug: bool, name: str = "tether ask") -> None:
        self.workspace, self.debug, self.name = workspace, debug, name
        self.console = Console()
        self.client = LanguageClient("tether-ask", __version__, converter_factory=wire.converter)
        self.encoding = "utf-16"
        self.session: str | None = None  # the session whose updates are shown
        self.early: list[dict[str, Any]] = []  # updates that came before its id was known
        self.ended: asyncio.Future[dict[str, Any]] | None = None  # the running turn's end
        self.run_id: str | None = None  # the request that starts a turn, until answered
        self.cancel_asked = False
        self.denial: tuple[str, str] | None = None  # (call_id, reason): deny once parked
        self.interrupts = 0
        self.log_tail: deque[str] = deque(maxlen=20)
        self.stop_reading = threading.Event()
        self.server: subprocess.Popen[bytes] | None = None
        self.transports: list[asyncio.BaseTransport] = []
        self.tasks: list[asyncio.Future[Any]] = []  # reading the server's stdout and stderr
        handlers: list[tuple[str, Callable[..., object]]] = [
            ("tether/update", self.on_update),
            (types.WINDOW_SHOW_MESSAGE_REQUEST, self.on_message_request),
            (types.WINDOW_SHOW_MESSAGE, self.on_message),
            (types.WINDOW_LOG_MESSAGE, self.on_message),
            (types.WORKSPACE_APPLY_EDIT, self.on_apply_edit),
        ]
        for method, handler in handlers:
            # pygls marks each handler with attributes, which a bound method cannot take.
            self.client.feature(method)(functools.partial(handler))

    async def connect(self, server: subprocess.Popen[bytes]) -> None:
        """Speak JSON-RPC over the pipes of a server that is already starting."""
        assert server.stdin and server.stdout and server.stderr
        self.server = server
        loop = asyncio.get_running_loop()
        writing, _ = await loop.connect_write_pipe(asyncio.Protocol, server.stdin)
        self.transports.append(writing)
        self.client.protocol.set_writer(wire.PipeWriter(writing))
        replies, errors = await self._reader(server.stdout), await self._reader(server.stderr)
        self.died: asyncio.Future[int] = wire.exited(loop, server)
        self.drained: asyncio.Future[None] = asyncio.ensure_future(self._drain(errors))
        reading = run_async(self.stop_reading, replies, self.client.protocol, logger=log)
        self.tasks = [asyncio.ensure_future(reading), self.drained]

    async def _reader(self, pipe: IO[bytes]) -> asyncio.StreamReader:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2**20)  # a long header line is the server's bug
        transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), pipe
        )
        self.transports.append(transport)
        return reader

    async def start(self, server: subprocess.Popen[bytes], options: dict[str, Any] | None) -> None:
        await self.connect(server)
        uri = self.workspace.as_uri()
        params = types.InitializeParams(
            capabilities=wire.CAPABILITIES,
            process_id=os.getpid(),
            client_info=types.ClientInfo(name=self.name, version=__version__),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=self.workspace.name)],
            initialization_options=options,
        )
        result = await self.call(self.client.initialize_async(params))
        encoding = result.capabilities.position_encoding
        self.encoding = getattr(encoding, "value", encoding) or "utf-16"
        self.client.initialized(types.InitializedParams())

    async def _drain(self, stream: asyncio.StreamReader) -> None:
        # The pipe must be read, or a chatty server blocks on a full buffer.
        with contextlib.suppress(ValueError):  # a line past the limit ends the log, not us
            while line := await stream.readline():
                if self.debug:
                    sys.stderr.write(visible(line.decode(errors="replace").rstrip("\n")) + "\n")
                    sys.stderr.flush()
                self.log_tail.append(line.decode(errors="replace").strip())

    async def call(self, request: Awaitable[T]) -> T:
        """The server's reply to ``request``, or ``ServerFailed`` if it dies first."""
        task = asyncio.ensure_future(request)
        either: list[asyncio.Future[Any]] = [task, self.died]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        # pygls fails a request with RuntimeError when the server exits, or is stopped.
        lost = not task.done() or isinstance(task.exception(), RuntimeError | ConnectionError)
        if not lost:
            return task.result()
        task.cancel()
        both: list[asyncio.Future[Any]] = [self.died, self.drained]
        await asyncio.wait(both, timeout=1)
        if not self.died.done():
            raise ServerFailed(f"tether: lost the connection to the server: {task.exception()}")
        said = next((line for line in reversed(self.log_tail) if line), "")
        raise ServerFailed(
            f"tether: the server stopped unexpectedly (exit code {self.died.result()})"
            + (f": {said}" if said else "")
            + ("" if self.debug else "; set TETHER_DEBUG=1 to see its log")
        )

    async def command(self, name: str, argument: dict[str, Any], msg_id: str | None = None) -> Any:
        params = types.ExecuteCommandParams(command=name, arguments=[argument])
        send = self.client.protocol.send_request_async
        return plain(await self.call(send(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)))

    async def follow(self, command: str, argument: dict[str, Any]) -> int:
        """Start a turn and follow it to its end; the exit code of its outcome."""
        self.session = argument.get("session")
        result = await self.turn(command, argument)
        # A call denied at the prompt with a reason was parked (a dialog's answer holds no
        # reason): deny it now, with the reason, and the turn runs on.
        while self.denial is not None and result.get("status") == "awaiting_approval":
            call_id, reason = self.denial
            self.denial = None
            if not any(c.get("call_id") == call_id for c in result.get("pending") or []):
                break
            argument = {"session": result["session"], "calls": [call_id], "reason": reason}
            result = await self.turn("tether.deny", argument)
        return self.console.outcome(result)

    async def turn(self, command: str, argument: dict[str, Any]) -> dict[str, Any]:
        """Start a turn with ``"wait": false`` and wait for its end: the TurnResult."""
        self.ended = asyncio.get_running_loop().create_future()
        self.run_id = f"tether-ask-{uuid.uuid4().hex[:8]}"
        try:
            started = await self.command(command, argument | {"wait": False}, msg_id=self.run_id)
        except JsonRpcRequestCancelled:  # Ctrl-C before the turn began: it never will
            return {"session": self.session, "status": "cancelled"}
        finally:
            self.run_id = None
        self.adopt(started["session"])
        if started.get("status") != "running":  # the turn could not run: this is its end
            self.ended = None
            return dict(started)
        if self.cancel_asked:  # Ctrl-C came while the request was on its way
            self.cancel()
        try:
            return await self.call(self.ended)
        finally:
            self.ended = None

    def adopt(self, session: str) -> None:
        """The session is known: show its updates that came before, and no other's."""
        self.session = session
        early, self.early = self.early, []
        for update in early:
            self.take(update)

    def interrupt(self, quit_now: Callable[[], object]) -> None:
        self.interrupts += 1
        if self.interrupts > 1 or self.ended is None or self.ended.done():
            quit_now()
            return
        self.console.note("  cancelling… (Ctrl-C again to quit at once)", "ask")
        self.cancel_asked = True
        if self.run_id is not None:  # not answered yet: cancel the request itself
            self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=self.run_id))
        else:
            self.cancel()

    def cancel(self) -> None:
        params = types.ExecuteCommandParams("tether.cancel", [{"session": self.session}])
        self.client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, params)

    def on_update(self, params: Any) -> None:
        update = plain(params)
        if self.session is None:  # a new session: its id comes with tether.run's result
            self.early.append(update)
        else:
            self.take(update)

    def take(self, update: dict[str, Any]) -> None:
        """Show an update of this session; the one that ends the turn ends the wait."""
        if update.get("session") != self.session:
            return  # another session's: a scheduled task, another client's turn
        if update.get("kind") != "status" or update.get("status") not in EXIT_CODES:
            self.console.update(update)
        elif self.ended is not None and update.get("result"):
            wire.settle(self.ended, update["result"])
        elif self.ended is not None:
            # An end that does not carry its result (a turn cancelled before its first
            # step, a parked one given up): the result, if one follows, is better.
            said = {"error": update["detail"]} if update.get("detail") else {}
            result = {"session": self.session, "status": update["status"], **said}
            asyncio.get_running_loop().call_later(RESULT_GRACE_S, wire.settle, self.ended, result)

    def on_message(self, params: types.ShowMessageParams | types.LogMessageParams) -> None:
        if isinstance(params, types.ShowMessageParams) or params.type <= types.MessageType.Warning:
            style = "bad" if params.type <= types.MessageType.Warning else None
            self.console.note(f"tether: {params.message}", style)

    async def on_message_request(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None:
        actions = list(params.actions or [])
        chosen = await self.console.choose(params.message, [a.title for a in actions])
        if chosen is None:
            return None
        action = actions[chosen]
        call_id = getattr(action, "call_id", None)
        if (
            action.title == DENY
            and call_id is not None
            and self.session is not None
            and (reason := await self.console.reason())
        ):
            self.denial = (call_id, reason)
            return None  # parked; `follow` denies it with the reason
        return action

    async def on_apply_edit(
        self, params: types.ApplyWorkspaceEditParams
    ) -> types.ApplyWorkspaceEditResult:
        result = await asyncio.to_thread(
            disk_edits.apply_workspace_edit, params.edit, self.encoding
        )
        what = params.label or "edit"
        if result.applied:
            self.console.note(f"  ✎ applied {what}", "ok")
        else:
            self.console.note(f"  ✗ {what} not applied: {result.failure_reason}", "bad")
        return result

    async def stop(self) -> None:
        """``shutdown`` and ``exit``; a server that does not go quietly is killed."""
        try:
            async with asyncio.timeout(10):
                await self.call(self.client.shutdown_async(None))
                self.client.exit(None)
                await asyncio.shield(self.died)
        except (TimeoutError, ServerFailed, RuntimeError, ConnectionError, JsonRpcException):
            await self.kill()

    async def kill(self) -> None:
        if self.server is not None and self.server.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.server.kill()
            await asyncio.wait([self.died], timeout=5)

    async def close(self) -> None:
        """Let go of the pipes; what is left of the server's output is read first."""
        self.stop_reading.set()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=1)
        for transport in self.transports:
            transport.close()
        for task in self.tasks:
            task.cancel()
