"""tether's exceptions, all in one tree.

    TetherError
    ├── ConfigError        settings that cannot work (say which variable or key to set)
    ├── ProviderError      the model provider failed after its retries -> turn status ``error``
    ├── ToolError          a tool could not do what was asked -> a tool result, status ``error``
    ├── CheckpointError    a checkpoint could not be taken or read -> logged; the turn goes on
    ├── Refused            the service will not do what was asked; nothing was changed
    │   ├── NotFound       an unknown session, call, task or rule
    │   ├── SessionBusy    a turn is already running on that session
    │   └── NothingWaiting the session has no calls waiting for a decision
    └── ClientError        ``tether ask``'s own failures -> one line on stderr, exit 1
        ├── ServerFailed   the server it started could not start, or stopped
        └── EditRefused    an editor edit it cannot apply to disk

Tool errors never leave the dispatcher: the model reads them and the turn goes on.
``Refused`` becomes a JSON-RPC ``InvalidParams`` error, and any other ``TetherError`` an
internal error with its own message, at exactly one place: ``lsp/errors.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the LSP front's start imports this module, and must not wait for pydantic
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


class CheckpointError(TetherError):
    pass


class Refused(TetherError):
    pass


class NotFound(Refused):
    @classmethod
    def session(cls, session: str) -> NotFound:
        return cls(f"unknown session {session!r}")


class SessionBusy(Refused):
    def __init__(self, session: str) -> None:
        super().__init__(f"a turn is already running on session {session!r}; wait or cancel it")


class NothingWaiting(Refused):
    def __init__(self, session: str) -> None:
        super().__init__(f"session {session!r} has no calls waiting for approval")


class ClientError(TetherError):
    pass


class ServerFailed(ClientError):
    """``tether serve`` could not start, or stopped while the terminal needed it."""


class EditRefused(ClientError):
    """A change the terminal cannot apply to disk; the message says which and why."""
