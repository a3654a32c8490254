"""What the ACP front knows of its client: the connection, what it can do, and the
session the running code serves (the seams are one per workspace, a request names a
session: ``SESSION`` says which, set by the prompt that runs the turn)."""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from acp.schema import ClientCapabilities

from tether.tools.base import FileEdit

if TYPE_CHECKING:
    from acp.interfaces import Client

    from tether.acp.updates import AcpUpdates

# The ACP session a turn runs for; tasks the turn starts inherit it.
SESSION: ContextVar[str | None] = ContextVar("tether_acp_session", default=None)


@dataclass
class Link:
    conn: Client | None = None
    capabilities: ClientCapabilities = field(default_factory=ClientCapabilities)
    sinks: dict[str, AcpUpdates] = field(default_factory=dict)  # session -> its updates
    # The edit a session's running patch made (the editor seam sees it whole): its
    # result's `tool_call_update` shows it as a diff.
    edits: dict[str, FileEdit] = field(default_factory=dict)

    @property
    def reads(self) -> bool:
        fs = self.capabilities.fs
        return bool(fs and fs.read_text_file)

    @property
    def writes(self) -> bool:
        fs = self.capabilities.fs
        return bool(fs and fs.write_text_file)
