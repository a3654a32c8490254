"""``tether ask``, ``sessions``, ``approve``, ``deny``: the terminal as an LSP client of
``tether serve``.

It starts ``python -m tether serve`` and drives it exactly as an editor does:
``initialize``, ``workspace/executeCommand`` (``tether.run``, ``tether.cancel``,
``tether.sessions``), ``tether/update`` rendered as it streams (``console.py``),
the approval dialog (``window/showMessageRequest``) answered at the terminal,
``workspace/applyEdit`` applied to disk (``disk_edits.py``), then ``shutdown`` and
``exit``. Ctrl-C cancels the turn (``tether.cancel``); a second Ctrl-C quits at once.

Exit codes: 0 done; 1 error, stopped, or a server that failed; 3 awaiting approval;
130 cancelled.

Environment:
    TETHER_DEBUG        show the server's log (its stderr) and this client's traffic
    TETHER_ASK_OPTIONS  a JSON object of settings, sent as ``initializationOptions``
                        ``{"tether": ...}``, e.g. ``{"provider": {"max_retries": 0}}``
    NO_COLOR            no colour on stderr
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import logging
import os
import signal
import subprocess
import sys
import uuid
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from tether import __version__
from tether.errors import ServerFailed
from tether.lsp.pygls_private import server_process
from tether.terminal import disk_edits
from tether.terminal.console import Console, plain, visible

T = TypeVar("T")
Body = Callable[["Terminal"], Awaitable[int]]
CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(
        work_done_progress=False,  # the terminal shows its own progress
        show_message=types.ShowMessageRequestClientCapabilities(
            message_action_item=types.ClientShowMessageActionItemOptions()
        ),
    ),
    workspace=types.WorkspaceClientCapabilities(
        apply_edit=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[types.ResourceOperationKind.Create],
            failure_handling=types.FailureHandlingKind.Abort,
        ),
    ),
)


def ask(prompt: str, workspace: Path, session: str | None) -> int:
    return _main(workspace, lambda terminal: terminal.ask(prompt, session))


def sessions(workspace: Path) -> int:
    return _main(workspace, lambda terminal: terminal.sessions())


def rules(workspace: Path) -> int:
    return _main(workspace, lambda terminal: terminal.rules())


def forget(workspace: Path, rule: str) -> int:
    return _main(workspace, lambda terminal: terminal.forget(rule))


def decide(workspace: Path, command: str, argument: dict[str, Any]) -> int:
    """``tether approve`` / ``tether deny``: decide a parked turn's calls, and watch it go on."""
    return _main(workspace, lambda terminal: terminal.decide(command, argument))


class Terminal:
    def __init__(self, workspace: Path, debug: bool) -> None:
        self.workspace, self.debug = workspace, debug
        self.console = Console()
        self.client = LanguageClient("tether-ask", __version__)
        self.encoding = "utf-16"
        self.session: str | None = None
        self.run_id: str | None = None  # the tether.run request in flight
        self.interrupts = 0
        self.log_tail: deque[str] = deque(maxlen=20)
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

    async def start(self, options: dict[str, Any] | None) -> None:
        own_group: dict[str, Any] = {"start_new_session": True}  # Ctrl-C is ours to pass on
        if sys.platform == "win32":
            own_group = {"creationflags": subprocess.CREATE_NEW_PROCESS_GROUP}
        try:
            await self.client.start_io(
                sys.executable, "-m", "tether", "serve", env=dict(os.environ), **own_group
            )
        except OSError as exc:
            raise ServerFailed(f"tether: could not start the server: {exc}") from None
        if (process := server_process(self.client)) is None:
            raise ServerFailed("tether: could not start the server")
        self.process: asyncio.subprocess.Process = process
        self.died = asyncio.ensure_future(process.wait())
        self.drained = asyncio.ensure_future(self._drain(process.stderr))
        uri = self.workspace.as_uri()
        params = types.InitializeParams(
            capabilities=CAPABILITIES,
            process_id=os.getpid(),
            client_info=types.ClientInfo(name="tether ask", version=__version__),
            root_uri=uri,
            workspace_folders=[types.WorkspaceFolder(uri=uri, name=self.workspace.name)],
            initialization_options=options,
        )
        result = await self.call(self.client.initialize_async(params))
        encoding = result.capabilities.position_encoding
        self.encoding = getattr(encoding, "value", encoding) or "utf-16"
        self.client.initialized(types.InitializedParams())

    async def _drain(self, stream: asyncio.StreamReader | None) -> None:
        # The pipe must be read, or a chatty server blocks on a full buffer.
        while stream is not None and (line := await stream.readline()):
            if self.debug:
                sys.stderr.write(visible(line.decode(errors="replace").rstrip("\n")) + "\n")
                sys.stderr.flush()
            self.log_tail.append(line.decode(errors="replace").strip())

    async def call(self, request: Awaitable[T]) -> T:
        """The server's reply to ``request``, or ``ServerFailed`` if it dies first."""
        task = asyncio.ensure_future(request)
        await asyncio.wait([task, self.died], return_when=asyncio.FIRST_COMPLETED)
        # pygls fails a request with RuntimeError when the server exits, or is stopped.
        lost = not task.done() or isinstance(task.exception(), RuntimeError | ConnectionError)
        if not lost:
            return task.result()
        task.cancel()
        await asyncio.wait([self.died, self.drained], timeout=1)
        if not self.died.done():
            raise ServerFailed(f"tether: lost the connection to the server: {task.exception()}")
        said = next((line for line in reversed(self.log_tail) if line), "")
        raise ServerFailed(
            f"tether: the server stopped unexpectedly (exit code {self.process.returncode})"
            + (f": {said}" if said else "")
            + ("" if self.debug else "; set TETHER_DEBUG=1 to see its log")
        )

    async def command(self, name: str, argument: dict[str, Any], msg_id: str | None = None) -> Any:
        params = types.ExecuteCommandParams(command=name, arguments=[argument])
        send = self.client.protocol.send_request_async
        return plain(await self.call(send(types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id)))

    async def ask(self, prompt: str, session: str | None) -> int:
        self.session = session
        self.run_id = f"tether-ask-{uuid.uuid4().hex[:8]}"
        argument = {"prompt": prompt} | ({"session": session} if session else {})
        result = await self.command("tether.run", argument, msg_id=self.run_id)
        self.run_id = None
        self.session = result.get("session", self.session)
        return self.console.outcome(result)

    async def decide(self, command: str, argument: dict[str, Any]) -> int:
        self.session = argument["session"]
        self.run_id = f"tether-ask-{uuid.uuid4().hex[:8]}"
        result = await self.command(command, argument, msg_id=self.run_id)
        self.run_id = None
        return self.console.outcome(result)

    async def sessions(self) -> int:
        self.console.sessions(
            (await self.command("tether.sessions", {}))["sessions"], self.workspace
        )
        return 0

    async def rules(self) -> int:
        self.console.rules((await self.command("tether.rules", {}))["rules"], self.workspace)
        return 0

    async def forget(self, rule: str) -> int:
        removed = (await self.command("tether.forget", {"rule": rule}))["removed"]
        self.console.note(f"forgot rule {rule}" if removed else f"no rule {rule} here", None)
        return 0 if removed else 1

    def interrupt(self, quit_now: Callable[[], object]) -> None:
        self.interrupts += 1
        if self.interrupts > 1 or self.run_id is None:
            quit_now()
            return
        self.console.note("  cancelling… (Ctrl-C again to quit at once)", "ask")
        if self.session is not None:
            params = types.ExecuteCommandParams("tether.cancel", [{"session": self.session}])
            self.client.protocol.send_request(types.WORKSPACE_EXECUTE_COMMAND, params)
        else:  # no update has named the new session yet: cancel the request itself
            self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=self.run_id))

    def on_update(self, params: Any) -> None:
        update = plain(params)
        self.session = self.session or update.get("session")
        self.console.update(update)

    def on_message(self, params: types.ShowMessageParams | types.LogMessageParams) -> None:
        if isinstance(params, types.ShowMessageParams) or params.type <= types.MessageType.Warning:
            style = "bad" if params.type <= types.MessageType.Warning else None
            self.console.note(f"tether: {params.message}", style)

    async def on_message_request(
        self, params: types.ShowMessageRequestParams
    ) -> types.MessageActionItem | None:
        actions = list(params.actions or [])
        chosen = await self.console.choose(params.message, [a.title for a in actions])
        return None if chosen is None else actions[chosen]

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
                await self.client.stop()  # type: ignore[no-untyped-call]
        except (TimeoutError, ServerFailed, RuntimeError, ConnectionError, JsonRpcException):
            await self.kill()

    async def kill(self) -> None:
        process = server_process(self.client)
        if process is not None and process.returncode is None:
            process.kill()
            await asyncio.wait([self.died], timeout=5)


def _main(workspace: Path, body: Body) -> int:
    debug = bool(os.environ.get("TETHER_DEBUG"))
    if debug:
        logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="tether ask: %(message)s")
    else:  # pygls and asyncio would print tracebacks for what this client reports in a line
        for name in ("pygls", "asyncio"):
            logging.getLogger(name).addHandler(logging.NullHandler())
            logging.getLogger(name).propagate = False
    try:
        options = json.loads(os.environ.get("TETHER_ASK_OPTIONS") or "null")
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"got {type(options).__name__}")
    except ValueError as exc:
        print(f"tether: TETHER_ASK_OPTIONS must be a JSON object: {exc}", file=sys.stderr)
        return 1
    if isinstance(sys.stdout, io.TextIOWrapper):  # an answer must not die on one odd character
        sys.stdout.reconfigure(errors="replace")
    try:
        return asyncio.run(_session(workspace, debug, options, body))
    except KeyboardInterrupt:
        return 130


async def _session(workspace: Path, debug: bool, options: Any, body: Body) -> int:
    terminal = Terminal(workspace, debug)
    loop, main = asyncio.get_running_loop(), asyncio.current_task()
    assert main is not None
    try:
        loop.add_signal_handler(signal.SIGINT, terminal.interrupt, main.cancel)
    except NotImplementedError:  # Windows
        signal.signal(
            signal.SIGINT, lambda *_: loop.call_soon_threadsafe(terminal.interrupt, main.cancel)
        )
    try:
        await terminal.start(None if options is None else {"tether": options})
        try:
            code = await body(terminal)
        except JsonRpcException as exc:  # e.g. an unknown session
            terminal.console.note(f"tether: {exc.message}", "bad")
            code = 1
        await terminal.stop()
        return code
    except asyncio.CancelledError:  # Ctrl-C twice, or while no turn runs
        terminal.console.end_text()
        if terminal.session:
            terminal.console.note(f"session: {terminal.session}", None)
        await terminal.kill()
        return 130
    except ServerFailed as exc:
        terminal.console.end_text()
        terminal.console.note(str(exc), "bad")
        await terminal.kill()
        return 1
