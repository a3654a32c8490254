"""The one place where exceptions become JSON-RPC errors."""

from __future__ import annotations

import functools
import logging
import reprlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from tether.errors import Refused, TetherError, problems
from tether.outbound import outbound, outbound_json

log = logging.getLogger(__name__)
A = TypeVar("A", bound=BaseModel)
Handler = Callable[[Any, A], Awaitable[BaseModel]]


def json_rpc_errors(argument: type[A]) -> Callable[[Handler[A]], Callable[..., Awaitable[Any]]]:
    """Validate a command's one JSON-object argument into ``argument``; map failures.

    A bad argument or a refused request (an unknown session, a busy one) is
    ``InvalidParams`` with a message that says what is wrong; any other tether error
    is an internal error with its own message; nothing else escapes as a stack trace.
    Text that is no Unicode (a lone surrogate, which JSON can spell and UTF-8 cannot)
    is a bad argument wherever it stands, as pydantic already finds it in some fields:
    a store or a file could take none of it.
    """

    def wrap(handler: Handler[A]) -> Callable[..., Awaitable[Any]]:
        # Not the handler's annotations or signature: pygls would structure arguments by them.
        @functools.wraps(handler, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
        async def command(ls: Any, *args: Any) -> Any:
            if len(args) != 1 or not isinstance(args[0], dict):
                got = outbound(reprlib.repr(args))  # the head of a huge one
                raise JsonRpcInvalidParams(
                    message=f"{handler.__name__}: expected one JSON object argument, got {got}"
                )
            if (where := _lone_surrogate(args[0])) is not None:
                message = f"invalid argument: {where}: text that is not Unicode (a lone surrogate)"
                raise JsonRpcInvalidParams(message=outbound(message))
            try:
                params = argument.model_validate(args[0])
            except ValidationError as exc:
                message = outbound(f"invalid argument: {problems(exc)}")
                raise JsonRpcInvalidParams(message=message) from None
            try:
                result = await handler(ls, params)
            except Refused as exc:
                raise JsonRpcInvalidParams(message=outbound(str(exc))) from None
            except TetherError as exc:
                raise JsonRpcInternalError(message=outbound(str(exc))) from None
            except Exception as exc:  # a bug: the editor gets one line, the log the traceback
                log.exception("%s failed", handler.__name__)
                raise JsonRpcInternalError(message=outbound(f"internal error: {exc!r}")) from None
            return outbound_json(result.model_dump(mode="json", exclude_none=True))

        del command.__wrapped__
        return command

    return wrap


def _lone_surrogate(value: Any) -> str | None:
    """Where in a JSON value a string holds a lone surrogate (``a.b[2]``), if anywhere."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return path or "the argument"
        elif isinstance(item, dict):
            for name, inner in item.items():
                here = f"{path}.{name}" if path else str(name)
                stack += [(here, name), (here, inner)]
        elif isinstance(item, list):
            stack.extend((f"{path}[{at}]", inner) for at, inner in enumerate(item))
    return None
