"""The contract's commands as the server offers them before their handlers are imported.

pygls lists a server's commands in its answer to ``initialize``; their handlers
(``commands``) import the agent's models, and pydantic with them, which that answer need
not wait for. So each name is registered at start with a stand-in that calls the real
handler, loaded by ``TetherServer.build_service`` before the next message is handled.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcInvalidParams

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

# Every handler of ``commands``, by name (a test holds the two lists to each other).
NAMES = (
    "tether.run",
    "tether.approve",
    "tether.deny",
    "tether.applied",
    "tether.cancel",
    "tether.sessions",
    "tether.history",
    "tether.planned",
    "tether.rules",
    "tether.tools",
    "tether.forget",
    "tether.schedule",
    "tether.unschedule",
    "tether.tasks",
    "tether.rewind",
)
Command = Callable[..., Awaitable[Any]]


class Handlers:
    """The commands' handlers, once loaded; until then each says the server is not ready."""

    def __init__(self) -> None:
        self._loaded: dict[str, Command] = {}

    def register(self, server: LanguageServer) -> None:
        for name in NAMES:
            server.command(name)(self._stand_in(name))

    def load(self) -> None:
        from tether.lsp import commands

        self._loaded = dict(commands.COMMANDS)

    def _stand_in(self, name: str) -> Command:
        # No annotations: pygls would structure the arguments by them.
        async def command(ls: Any, *args: Any) -> Any:
            handler = self._loaded.get(name)
            if handler is None:
                raise JsonRpcInvalidParams(
                    message="tether is not initialized yet: send `initialize` first"
                )
            return await handler(ls, *args)

        command.__name__ = command.__qualname__ = name
        return command
