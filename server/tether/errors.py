"""tether's exceptions, all in one tree.

    TetherError
    ├── ConfigError        settings that cannot work (say which variable to set)
    ├── ProviderError      the model provider failed after its retries -> turn status ``error``
    ├── ToolError          a tool could not do what was asked -> a tool result, status ``error``
    ├── RequestError       a command's argument is wrong -> a JSON-RPC error, nothing changed
    │   ├── UnknownSession
    │   └── SessionBusy    a turn is already running on that session
    ├── ServerFailed       (lsp/terminal.py) `tether ask` lost its server -> one line, exit 1
    └── EditRefused        (lsp/edits.py) `tether ask` cannot apply an editor edit to disk

Tool errors never leave the dispatcher: the model reads them and the turn goes on.
Request errors become JSON-RPC errors at exactly one place, ``lsp/errors.py``.
"""

from pydantic import ValidationError


def problems(exc: ValidationError) -> str:
    """A validation error in one line a person or a model can act on."""
    return "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
    )


class TetherError(Exception):
    """Base of every error tether raises on purpose."""


class ConfigError(TetherError):
    pass


class ProviderError(TetherError):
    pass


class ToolError(TetherError):
    pass


class RequestError(TetherError):
    pass


class UnknownSession(RequestError):
    def __init__(self, session: str) -> None:
        super().__init__(f"unknown session {session!r}")


class SessionBusy(RequestError):
    def __init__(self, session: str) -> None:
        super().__init__(f"a turn is already running on session {session!r}; wait or cancel it")
