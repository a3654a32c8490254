"""The protocol front: a pygls server that hands each request to ``Tether``."""

from __future__ import annotations

import asyncio
import logging
import os
from collections import deque
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path

from tether import __version__
from tether.app import Tether
from tether.config import Settings
from tether.errors import ConfigError, RequestError
from tether.lsp.approval import LspPerson
from tether.lsp.bridge import LspDocuments, LspUpdates
from tether.lsp.editor import LspEditor

log = logging.getLogger(__name__)


class TetherProtocol(LanguageServerProtocol):
    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # pygls answers "cancelled" at once and leaves the handler running; a turn
        # instead ends through its own cancellation and answers with status `cancelled`.
        server = self._server
        assert isinstance(server, TetherServer)
        if server.cancel_turn_request(msg_id):
            return
        server.early_cancels.append(msg_id)
        super()._handle_cancel_notification(msg_id)


class EditorLog(logging.Handler):
    """tether's warnings and errors reach the editor's log too (``window/logMessage``)."""

    def __init__(self, ls: LanguageServer) -> None:
        super().__init__(logging.WARNING)
        self.ls = ls

    def emit(self, record: logging.LogRecord) -> None:
        kind = (
            types.MessageType.Error
            if record.levelno >= logging.ERROR
            else types.MessageType.Warning
        )
        try:
            self.ls.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )
        except Exception:  # logging must never raise into the code that logged
            self.handleError(record)


class TetherServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("tether", __version__, protocol_cls=TetherProtocol)
        self._tether: Tether | None = None
        self.settings = Settings()
        self.documents = LspDocuments(self)
        self.editor = LspEditor(self, self.documents)
        # The editor's layers, kept so a change reloads from every source (a new provider
        # kind must pick its own key variable, never carry the old vendor's key over).
        self.init_layer: dict[str, Any] = {}
        self.change_layer: dict[str, Any] = {}
        self.turn_requests: dict[Any, str] = {}  # tether.run request id -> session
        self.progress_sessions: dict[Any, str] = {}  # $/progress token -> session
        self.early_cancels: deque[Any] = deque(maxlen=256)
        self.scheduling: asyncio.Task[None] | None = None

    @property
    def tether(self) -> Tether:
        if self._tether is None:
            raise RequestError("tether is not initialized yet: send `initialize` first")
        return self._tether

    def reload(self) -> None:
        """Settings from every source; a bad one is reported, and the last good ones stay."""
        try:
            self.settings = Settings.load(os.environ, self.init_layer, self.change_layer)
        except ConfigError as exc:
            log.warning("%s", exc)
            self.window_show_message(
                types.ShowMessageParams(type=types.MessageType.Warning, message=f"tether: {exc}")
            )

    def start(self, params: types.InitializeParams) -> None:
        logging.getLogger("tether").addHandler(EditorLog(self))
        options = params.initialization_options
        layer = options.get("tether", {}) if isinstance(options, dict) else {}
        self.init_layer = layer if isinstance(layer, dict) else {}
        self.reload()
        workspace = _workspace_root(params)
        self._tether = Tether(
            self.settings, workspace, self.documents, LspPerson(self), self.editor
        )
        log.info("tether %s serving %s", __version__, workspace)

    def start_scheduler(self) -> None:
        if self._tether is None or self.scheduling is not None:
            return
        scheduler = self._tether.start_scheduler(lambda s: LspUpdates(self, s, announce=True))
        self.scheduling = asyncio.create_task(scheduler.serve())

    async def stop_scheduler(self) -> None:
        if self.scheduling is not None:
            self.scheduling.cancel()
            await asyncio.gather(self.scheduling, return_exceptions=True)
            self.scheduling = None

    def configure(self, layer: Any) -> None:
        if not isinstance(layer, dict):
            return
        self.change_layer = layer
        self.reload()
        if self._tether is not None:
            self._tether.reconfigure(self.settings)

    def cancel_turn_request(self, msg_id: Any) -> bool:
        session = self.turn_requests.get(msg_id)
        return session is not None and self.tether.cancel(session, LspUpdates(self, session))

    def report_server_error(self, error: Exception, source: Any) -> None:
        # The default pops a message in the editor for every bad message. A request's error
        # already travels in its response; only out-of-band ones are worth the editor's log.
        level = logging.DEBUG if source is FeatureRequestError else logging.ERROR
        log.log(level, "%s: %s", getattr(source, "__name__", source), error)


def _workspace_root(params: types.InitializeParams) -> Path:
    for uri in [f.uri for f in params.workspace_folders or []] + [params.root_uri or ""]:
        if uri and (path := to_fs_path(uri)):
            return Path(path)
    if params.root_path:
        return Path(params.root_path)
    return Path.cwd()


def create_server() -> TetherServer:
    from tether.lsp import commands, features

    server = TetherServer()
    features.register(server)
    commands.register(server)
    return server
