"""The private parts of pygls that tether relies on, each wrapped once, here.

pygls offers no public way to do these; ``tests/unit/lsp/test_pygls_private.py``
fails if a pygls release changes any of them, before a person meets the breakage.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pygls.client import JsonRPCClient
from pygls.protocol import LanguageServerProtocol


class OwnCancels(LanguageServerProtocol):
    """``$/cancelRequest`` for a request the server cancels its own way.

    pygls answers a cancelled request "cancelled" at once and leaves its handler
    running; a turn instead ends through its own cancellation and answers with
    status ``cancelled``. ``take_cancel`` (set by the server) says whether it took
    the cancel; if not, pygls handles it as it would.
    """

    take_cancel: Callable[[Any], bool] = staticmethod(lambda msg_id: False)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        if not self.take_cancel(msg_id):
            super()._handle_cancel_notification(msg_id)


def forget_request(protocol: LanguageServerProtocol, msg_id: str) -> None:
    """Drop a request this side sent and no longer waits for (a question taken back), so
    its late answer is ignored instead of resolving a future nobody awaits."""
    protocol._request_futures.pop(msg_id, None)


def server_process(client: JsonRPCClient) -> asyncio.subprocess.Process | None:
    """The process a client started with ``start_io``."""
    process: asyncio.subprocess.Process | None = client._server
    return process


def shutdown_answered(protocol: LanguageServerProtocol) -> bool:
    """Whether pygls has finished ``shutdown`` (it answers the request as it sets this)."""
    return bool(protocol._shutdown)
