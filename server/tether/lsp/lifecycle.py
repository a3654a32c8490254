"""The LSP lifecycle and its notifications: initialize, configuration, progress cancel,
shutdown."""

from __future__ import annotations

from lsprotocol import types

from tether.lsp import indexing
from tether.lsp.server import TetherServer


def register(server: TetherServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: TetherServer, params: types.InitializeParams) -> None:
        ls.start(params)

    @server.feature(types.INITIALIZED)
    def initialized(ls: TetherServer, params: types.InitializedParams) -> None:
        ls.start_scheduler()
        ls.ask_for_tool_sources()
        indexing.start(ls)  # in the background: the watcher, then the index

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: TetherServer, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        layer = settings.get("tether", settings) if isinstance(settings, dict) else None
        if isinstance(layer, dict):
            ls.configure("change", layer)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: TetherServer, params: types.WorkDoneProgressCancelParams) -> None:
        if (session := ls.progress_sessions.get(params.token)) is not None:
            ls.service.cancel(session, ls.updates(session))

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: TetherServer, *args: object) -> None:
        # Turns must end before pygls tears down its request table (pygls#606).
        await ls.stop()
