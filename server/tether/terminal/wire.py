"""The terminal client's wiring to the ``tether serve`` it started: the capabilities it
advertises, pygls's converter taught the dialog's ``call_id`` (contract v2), the server's
stdin as pygls writes to it, and the server's exit as a future."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import threading
from typing import Any, TypeVar

import attrs
import cattrs
from lsprotocol import types
from pygls.protocol import default_converter

T = TypeVar("T")
CAPABILITIES = types.ClientCapabilities(
    window=types.WindowClientCapabilities(
        work_done_progress=False,  # the terminal shows its own progress
        show_message=types.ShowMessageRequestClientCapabilities(
            # Action items carry the call's id: a denial's reason is sent for that call.
            message_action_item=types.ClientShowMessageActionItemOptions(
                additional_properties_support=True
            )
        ),
    ),
    workspace=types.WorkspaceClientCapabilities(
        apply_edit=True,
        workspace_edit=types.WorkspaceEditClientCapabilities(
            document_changes=True,
            resource_operations=[types.ResourceOperationKind.Create],
            failure_handling=types.FailureHandlingKind.Abort,
        ),
    ),
)


@attrs.define
class ActionItem(types.MessageActionItem):
    """A dialog's action as the server sent it: with the ``call_id`` it is about (v2)."""

    call_id: str | None = None


def converter() -> cattrs.Converter:
    """pygls's converter, keeping the ``call_id`` of the dialog's actions both ways."""
    made: cattrs.Converter = default_converter()  # type: ignore[no-untyped-call]

    def structure(value: Any, _: type) -> ActionItem:
        call_id = value.get("call_id")
        return ActionItem(title=value["title"], call_id=None if call_id is None else str(call_id))

    def unstructure(item: ActionItem) -> dict[str, Any]:
        return {"title": item.title} | ({} if item.call_id is None else {"call_id": item.call_id})

    made.register_structure_hook(types.MessageActionItem, structure)
    made.register_unstructure_hook(ActionItem, unstructure)
    return made


class PipeWriter:
    """The server's stdin, as pygls writes to it (no waiting: the server always reads)."""

    def __init__(self, transport: asyncio.WriteTransport) -> None:
        self.transport = transport

    def write(self, data: bytes) -> None:
        if not self.transport.is_closing():
            self.transport.write(data)

    def close(self) -> None:
        self.transport.close()


def settle(future: asyncio.Future[T], value: T) -> None:
    if not future.done():
        future.set_result(value)


def exited(loop: asyncio.AbstractEventLoop, server: subprocess.Popen[bytes]) -> asyncio.Future[int]:
    """A future of the server's exit code (a daemon thread waits: it never holds up exit)."""
    exited: asyncio.Future[int] = loop.create_future()

    def wait() -> None:
        code = server.wait()
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(settle, exited, code)

    threading.Thread(target=wait, name="tether-server-exit", daemon=True).start()
    return exited
