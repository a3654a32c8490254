"""The one place where the ACP front's exceptions become JSON-RPC errors: a refused
request (an unknown session, a busy one, a bad prompt) is ``-32602`` with a message that
says what is wrong, any other tether error ``-32603`` with its own message; a bug is one
line to the client and its traceback to the log."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import ParamSpec, TypeVar

from acp import RequestError

from tether.errors import Refused, TetherError
from tether.outbound import outbound

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")
INVALID_PARAMS, INTERNAL_ERROR = -32602, -32603


def answered(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    @functools.wraps(handler)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except RequestError:
            raise
        except Refused as exc:
            raise RequestError(INVALID_PARAMS, outbound(str(exc))) from None
        except TetherError as exc:
            raise RequestError(INTERNAL_ERROR, outbound(str(exc))) from None
        except Exception as exc:
            log.exception("%s failed", handler.__name__)
            raise RequestError(INTERNAL_ERROR, outbound(f"internal error: {exc!r}")) from None

    return wrapper
