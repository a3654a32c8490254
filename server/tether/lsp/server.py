"""The protocol front: a pygls server that hands each request to the service.

The server owns what only LSP knows (the client's capabilities, request ids,
progress tokens) and builds the service once, right after answering ``initialize``,
with the LSP implementations of the agent's seams (``documents``, ``dialogs``,
``editor``). The agent's stack is imported only then, the settings (pydantic) and the
commands' handlers (``deferred``) too: the editor's handshake waits for none of it, and
the next message is handled once the service is built.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from tether import __version__
from tether.errors import Refused
from tether.lsp import deferred
from tether.lsp.documents import LspDocuments
from tether.lsp.pygls_private import (
    OwnCancels,
    quiet_answered_errors,
    request_running,
    shutdown_answered,
)
from tether.outbound import RedactingFilter, outbound

if TYPE_CHECKING:
    from tether.config import Configuration
    from tether.lsp.editor import LspEditor
    from tether.lsp.updates import LspUpdates
    from tether.service import Service

log = logging.getLogger(__name__)
WIND_DOWN_S = 10.0  # the longest a stop may take once the client has gone


class EditorLog(logging.Handler):
    """tether's warnings and errors reach the editor's log too (``window/logMessage``)."""

    def __init__(self, ls: LanguageServer) -> None:
        super().__init__(logging.WARNING)
        self.ls = ls
        self.sending = False
        self.addFilter(RedactingFilter())

    def emit(self, record: logging.LogRecord) -> None:
        if self.sending:  # a line that failed to reach the editor is not sent there again
            return
        kind = (
            types.MessageType.Error
            if record.levelno >= logging.ERROR
            else types.MessageType.Warning
        )
        self.sending = True
        try:
            self.ls.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )
        except Exception:  # logging must never raise into the code that logged
            self.handleError(record)
        finally:
            self.sending = False


class TetherServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tether", __version__, protocol_cls=OwnCancels)
        assert isinstance(self.protocol, OwnCancels)
        self.protocol.take_cancel = self.cancel_turn_request
        # A copy: the process's own environment loses the keys once the server is made.
        self._env = dict(os.environ)
        self._config: Configuration | None = None
        self._layers: list[tuple[str, dict[str, Any]]] = []  # told before the settings loaded
        self.handlers = deferred.Handlers()
        self._service: Service | None = None
        self._starting: Path | None = None  # the workspace, from `initialize` to the build
        self._failed: str | None = None  # why the service could not be built
        self._editor: LspEditor | None = None
        self.turn_requests: dict[Any, str] = {}  # tether.run request id -> session
        self.progress_sessions: dict[Any, str] = {}  # $/progress token -> session
        self.early_cancels: deque[Any] = deque(maxlen=256)
        self.background: set[asyncio.Future[Any]] = set()  # turns started with wait: false
        self.scheduling: asyncio.Task[None] | None = None
        self.client_info: types.ClientInfo | None = None
        self.stopping: asyncio.Future[None] | None = None

    @property
    def config(self) -> Configuration:
        """The settings, loaded (with pydantic) at their first use: the service's build,
        after ``initialize`` has been answered (a TCP server's start, before)."""
        if self._config is None:
            from tether.config import Configuration

            self._config = Configuration(self._env)
        return self._config

    @property
    def service(self) -> Service:
        if self._service is None:
            if self._failed is not None:
                raise Refused(f"tether could not start: {self._failed}")
            raise Refused("tether is not initialized yet: send `initialize` first")
        return self._service

    @property
    def editor(self) -> LspEditor:
        if self._editor is None:
            raise Refused("tether is not initialized yet: send `initialize` first")
        return self._editor

    @property
    def terminal_client(self) -> bool:
        info = self.client_info
        return info is not None and info.name.startswith("tether ")

    def start(self, params: types.InitializeParams) -> None:
        self.client_info = params.client_info
        logging.getLogger("tether").addHandler(EditorLog(self))
        options = params.initialization_options
        layer = options.get("tether", {}) if isinstance(options, dict) else {}
        self.configure("init", layer if isinstance(layer, dict) else {})
        self._starting = _workspace_root(params)  # built once `initialize` is answered

    def build_service(self) -> None:
        """Build the service, once ``initialize`` has been answered (``serving.pump`` calls
        this before it hands on the next message). A service that cannot be built (its
        store cannot be opened...) is told, and each request is refused saying why."""
        if self._starting is None or self._service is not None:
            return
        workspace, self._starting = self._starting, None
        from tether import app  # the agent's stack, tools, providers, store
        from tether.lsp.dialogs import LspPerson
        from tether.lsp.editor import LspEditor

        self.handlers.load()
        for source, layer in self._layers:
            self._apply(source, layer)
        self._layers.clear()
        documents = LspDocuments(self.workspace)
        self._editor = LspEditor(self, documents)
        try:
            self._service = app.build(
                self.config, workspace, documents, LspPerson(self), self._editor, tell=self.tell
            )
        except Exception as exc:
            self._failed = str(exc) or type(exc).__name__
            log.error("tether could not start: %s", self._failed)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Error,
                    message=outbound(f"tether could not start: {self._failed}"),
                )
            )
            return
        self._service.in_force.start_sources()  # in the background
        pruning = asyncio.ensure_future(self._service.prune_checkpoints())
        self.background.add(pruning)  # old checkpoints go at start (checkpoint.keep_days)
        pruning.add_done_callback(self.background.discard)
        log.info("tether %s serving %s", __version__, workspace)

    def configure(self, source: str, layer: dict[str, Any]) -> None:
        """Settings from the editor; a bad layer is reported, and the last good ones stay.
        Until the service is built (``initialize``'s own layer) they wait for it."""
        if self._service is None and self._config is None:
            self._layers.append((source, layer))
        else:
            self._apply(source, layer)

    def _apply(self, source: str, layer: dict[str, Any]) -> None:
        problem = self.config.set_layer(source, layer)
        if problem is not None:
            log.warning("%s", problem)
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning, message=f"tether: {problem}"
                )
            )
        if self._service is not None:
            self._service.in_force.reconfigure_sources()  # MCP servers added, removed, changed

    def tell(self, message: str) -> None:
        """Something the person should know, told once by its caller (not a question)."""
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=outbound(message))
        )

    def ask_for_tool_sources(self) -> None:
        """An editor's person is asked about the workspace's `.mcp.json` servers once the
        editor is ready for dialogs; the short-lived servers behind `tether …` never ask."""
        if self._service is not None and not self.terminal_client:
            self._service.in_force.ask_for_sources()

    def start_scheduler(self) -> None:
        """Due tasks run in servers an editor started; never in the short-lived ones behind
        `tether ask`, `tether sessions`… (their client names itself `tether …`)."""
        if self._service is None or self.scheduling is not None or self.terminal_client:
            return
        service = self._service
        self.scheduling = asyncio.create_task(
            service.serve_schedule(lambda session: self.updates(session, announce=True))
        )

    async def stop(self) -> None:
        """Stop once, however many ask."""
        if self.stopping is None:
            self.stopping = asyncio.ensure_future(self._stop())
        await asyncio.shield(self.stopping)

    async def wind_down(self) -> None:
        """The client has gone (its ``exit``, or a hang-up without one): stop as after
        ``shutdown``, every turn answering its calls and the databases closed, within
        ``WIND_DOWN_S``. Left to the end of ``asyncio.run``, every task would be cancelled
        at once, and one cancelled while it starts a program never ends (Python 3.11's
        asyncio waits for the pipes of a process that a cancelled task was to connect)."""
        try:
            async with asyncio.timeout(WIND_DOWN_S):
                await self.stop()
        except TimeoutError:
            log.warning("stopping took over %g s: tether exits without waiting", WIND_DOWN_S)

    async def before_exit(self) -> None:
        """An ``exit`` sent right behind ``shutdown`` waits until the shutdown is done and
        answered (pygls would end the process in the middle of it)."""
        await asyncio.sleep(0)  # the handler of a `shutdown` handed over just now starts
        if self.stopping is None:
            return  # no `shutdown`: `exit` ends the process at once
        await asyncio.shield(self.stopping)
        for _ in range(100):  # pygls answers in a callback queued as the handler ends
            if shutdown_answered(self.protocol):
                return
            await asyncio.sleep(0)

    async def _stop(self) -> None:
        """Stop the scheduler, then every turn (each answers its calls), then the store."""
        if self.scheduling is not None:
            self.scheduling.cancel()
            await asyncio.gather(self.scheduling, return_exceptions=True)
            self.scheduling = None
        if self._service is not None:
            await self._service.shutdown()
        await asyncio.gather(*self.background, return_exceptions=True)

    def cancel_turn_request(self, msg_id: Any) -> bool:
        """``$/cancelRequest`` on a turn's request cancels the turn; on one that has not
        started yet, it is remembered so the turn never starts. A cancel naming no request
        still running is not (its id may be any string, of any size)."""
        session = self.turn_requests.get(msg_id)
        service = self._service
        if session is not None and service and service.cancel(session, self.updates(session)):
            return True
        if request_running(self.protocol, msg_id):
            self.early_cancels.append(msg_id)
        return False

    def updates(self, session: str, announce: bool = False) -> LspUpdates:
        """Where a turn of ``session`` tells the editor what happens (the agent's events:
        imported with the service, after ``initialize``)."""
        from tether.lsp.updates import LspUpdates

        return LspUpdates(self, session, announce=announce)

    def report_server_error(self, error: Exception, source: Any) -> None:
        # The default pops a message in the editor for every bad message. A request's error
        # already travels in its response; only out-of-band ones are worth the editor's log.
        level = logging.DEBUG if source is FeatureRequestError else logging.ERROR
        log.log(level, "%s: %s", getattr(source, "__name__", source), error)


def _workspace_root(params: types.InitializeParams) -> Path:
    """The first workspace folder, else the root; one whose path holds a NUL names none."""
    paths = [to_fs_path(f.uri) for f in params.workspace_folders or []]
    paths += [to_fs_path(params.root_uri) if params.root_uri else None, params.root_path]
    for path in paths:
        if path and "\0" not in path:
            return Path(path)
    return Path.cwd()


def create_server() -> TetherServer:
    from tether.lsp import code_actions, indexing, lifecycle

    quiet_answered_errors()
    server = TetherServer()
    lifecycle.register(server)
    code_actions.register(server)
    server.handlers.register(server)
    indexing.register(server)
    return server
