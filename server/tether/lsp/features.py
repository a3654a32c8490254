"""LSP lifecycle and notifications: initialize, configuration, progress cancel, shutdown."""

from __future__ import annotations

from lsprotocol import types

from tether.lsp.server import TetherServer


def register(server: TetherServer) -> None:
    @server.feature(types.INITIALIZE)
    def initialize(ls: TetherServer, params: types.InitializeParams) -> None:
        ls.start(params)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(
        ls: TetherServer, params: types.DidChangeConfigurationParams
    ) -> None:
        settings = params.settings
        ls.configure(settings.get("tether", settings) if isinstance(settings, dict) else None)

    @server.feature(types.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    def progress_cancel(ls: TetherServer, params: types.WorkDoneProgressCancelParams) -> None:
        if (session := ls.progress_sessions.get(params.token)) is not None:
            ls.tether.cancel(session)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: TetherServer, *args: object) -> None:
        # Turns must end before pygls tears down its request table (pygls#606).
        if ls._tether is not None:
            await ls._tether.shutdown()
