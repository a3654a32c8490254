"""The private parts of pygls that tether relies on, each wrapped once, here.

pygls offers no public way to do these; ``tests/unit/lsp/test_pygls_private.py``
fails if a pygls release changes any of them, before a person meets the breakage.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
from collections.abc import Callable, Generator
from concurrent.futures import Future
from typing import Any

from lsprotocol import types
from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import JsonRPCRequestMessage

log = logging.getLogger(__name__)

# The workDoneToken the ``workspace/executeCommand`` request being handled came with, if
# its client sent one: pygls hands a command its arguments alone. Each message is handled
# in a context of its own, and the command's task copies it.
COMMAND_PROGRESS: contextvars.ContextVar[types.ProgressToken | None] = contextvars.ContextVar(
    "command_progress", default=None
)


class OwnCancels(LanguageServerProtocol):
    """``$/cancelRequest`` for a request the server cancels its own way, and pygls's
    table of running handlers kept to the running ones.

    pygls answers a cancelled request "cancelled" at once and leaves its handler
    running; a turn instead ends through its own cancellation and answers with
    status ``cancelled``. ``take_cancel`` (set by the server) says whether it took
    the cancel; if not, pygls handles it as it would. A cancel whose id is no integer
    or string names no request, and does nothing.

    pygls 2.1 files the future of each handler it runs in ``_request_futures`` (so that
    ``shutdown`` can cancel it), and takes out only a request's own, when it answers:
    every notification, and every handler a built-in feature hands on to, stay there
    under a key of their own for the life of the server (the LSP fuzz campaign: about
    2 KB for each ``didOpen``, ``didChange``...). Each is taken out once done.
    """

    take_cancel: Callable[[Any], bool] = staticmethod(lambda msg_id: False)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # pygls takes any JSON value for the id: `true` or `1.0` would cancel request 1
        # (equal keys), a list or an object would raise. No request has such an id.
        if isinstance(msg_id, bool) or not isinstance(msg_id, int | str):
            log.info("a cancel names no request: its id is %.50r", msg_id)
            return
        if not self.take_cancel(msg_id):
            super()._handle_cancel_notification(msg_id)

    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    def lsp_workspace__execute_command(
        self, params: types.ExecuteCommandParams
    ) -> Generator[Any, Any, Any]:
        """pygls's own, but a command is handed its arguments as the client sent them.
        tether's commands take ``(ls, *args)`` and validate their one argument themselves
        (``errors.json_rpc_errors``); pygls would structure each argument by the
        handler's type hints, read again at every command (150 µs of a turn's start)."""
        COMMAND_PROGRESS.set(params.work_done_token)
        if (handler := self.fm.commands.get(params.command)) is None:
            missing = ValueError(f"Command name {params.command!r} is not defined")
            raise JsonRpcInvalidParams.of(missing)
        return (yield handler, tuple(params.arguments or ()), None)

    def _execute_handler(
        self,
        msg_id: Any,
        handler: Any,
        callback: Any,
        args: tuple[Any, ...] | None = None,
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super()._execute_handler(msg_id, handler, callback, args, kwargs)
        if (future := self._request_futures.get(msg_id)) is None:
            return
        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # a handler run by hand, with no loop: nothing else runs
            loop = None
        future.add_done_callback(functools.partial(self._forget, loop, msg_id))

    def _forget(self, loop: asyncio.AbstractEventLoop | None, msg_id: Any, done: Any) -> None:
        """Take a finished handler's future out of the table, on the loop's own thread (a
        thread handler's future calls back on its worker) and after whatever runs now (a
        future cancelled while ``shutdown`` walks the table calls back in that walk)."""
        if loop is None:
            self._forget_now(msg_id, done)
            return
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is left
            loop.call_soon_threadsafe(self._forget_now, msg_id, done)

    def _forget_now(self, msg_id: Any, done: Any) -> None:
        """The future leaves the table only if it is still the one under its id."""
        if self._request_futures.get(msg_id) is done:
            del self._request_futures[msg_id]


def forget_request(protocol: LanguageServerProtocol, msg_id: str) -> None:
    """Drop a request this side sent and no longer waits for (a question taken back), so
    its late answer is ignored instead of resolving a future nobody awaits."""
    protocol._request_futures.pop(msg_id, None)


def send_as_given(
    protocol: LanguageServerProtocol, method: str, params: dict[str, Any], msg_id: str
) -> asyncio.Future[Any]:
    """Send a request whose params go exactly as given. pygls builds a known method's
    params as their lsprotocol type, which drops what the type does not name: an action
    item's extra properties, which LSP allows where the client supports them."""
    future: Future[Any] = Future()
    protocol._request_futures[msg_id] = future
    protocol._result_types[msg_id] = protocol.get_result_type(method)
    message = JsonRPCRequestMessage(
        id=msg_id, method=method, params=params, jsonrpc=JsonRPCProtocol.VERSION
    )
    protocol._send_data(message)
    return asyncio.wrap_future(future)


def request_running(protocol: LanguageServerProtocol, msg_id: Any) -> bool:
    """Whether a request with this id is still being handled (or waits for its answer)."""
    return msg_id in protocol._request_futures


def server_process(client: JsonRPCClient) -> asyncio.subprocess.Process | None:
    """The process a client started with ``start_io``."""
    process: asyncio.subprocess.Process | None = client._server
    return process


def shutdown_answered(protocol: LanguageServerProtocol) -> bool:
    """Whether pygls has finished ``shutdown`` (it answers the request as it sets this)."""
    return bool(protocol._shutdown)


class AnsweredErrors(logging.Filter):
    """pygls logs every JSON-RPC error a handler raises with its traceback, though the error
    is the request's answer: a busy session, an unknown call, a bad argument. Those go
    unlogged; an internal error (a bug) keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, JsonRpcException) or isinstance(error, JsonRpcInternalError)


def quiet_answered_errors() -> None:
    """Install ``AnsweredErrors`` on the logger pygls's JSON-RPC protocol logs to (once)."""
    logger = logging.getLogger(JsonRPCProtocol.__module__)
    if not any(isinstance(f, AnsweredErrors) for f in logger.filters):
        logger.addFilter(AnsweredErrors())
