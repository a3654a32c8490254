"""End-to-end harness for the ACP front: the ACP Python SDK's client drives a real
``tether acp`` over stdio, against the loopback provider stub, in a real workspace.

``AcpEditor`` plays the editor: it records every ``session/update``, answers
``session/request_permission`` from a script (an option id, or None: cancelled), and
serves ``fs/read_text_file`` / ``fs/write_text_file`` from its buffers (unsaved text by
path), falling back to the disk as Zed does for a file it has not open.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, cast

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.interfaces import Client
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)

from tests.e2e.conftest import server_env
from tests.support.provider_stub import ProviderStub

AGENT = [sys.executable, "-m", "tether", "acp"]


class AcpEditor:
    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.updates: list[tuple[str, Any]] = []  # (session, update), in arrival order
        self.changed = asyncio.Event()
        self.answers: list[str | None] = []  # option ids in order; none left: cancelled
        self.asked: list[tuple[ToolCallUpdate, list[PermissionOption]]] = []
        self.hold_questions = False  # leave permission requests unanswered
        self.answer_when: asyncio.Event | None = None  # answer only once this is set
        self.buffers: dict[str, str] = {}  # absolute path -> the editor's (unsaved) text
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.read_delay = 0.0
        self.reading = self.most_reading = 0  # reads in flight now, and the most at once

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))
        self.changed.set()

    async def request_permission(
        self, options: list[PermissionOption], session_id: str, tool_call: ToolCallUpdate, **_: Any
    ) -> RequestPermissionResponse:
        self.asked.append((tool_call, options))
        self.changed.set()
        if self.hold_questions:
            await asyncio.Event().wait()
        if self.answer_when is not None:
            await self.answer_when.wait()
        answer = self.answers.pop(0) if self.answers else None
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=answer)
        )

    async def read_text_file(
        self,
        path: str,
        session_id: str,
        limit: int | None = None,
        line: int | None = None,
        **_: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        self.reading += 1
        self.most_reading = max(self.most_reading, self.reading)
        try:
            await asyncio.sleep(self.read_delay)
        finally:
            self.reading -= 1
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        try:
            return ReadTextFileResponse(content=Path(path).read_text())
        except OSError:
            raise RequestError.resource_not_found(path) from None

    async def write_text_file(
        self, content: str, path: str, session_id: str, **_: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    def of(self, kind: str, session: str | None = None) -> list[Any]:
        """The updates of one kind (``sessionUpdate``), in order."""
        return [u for s, u in self.updates if u.session_update == kind and session in (None, s)]

    def said(self, session: str | None = None) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk", session))

    def call(self, call_id: str) -> list[Any]:
        """Every update about one tool call."""
        return [u for _, u in self.updates if getattr(u, "tool_call_id", None) == call_id]

    async def wait_for(self, predicate: Callable[[], bool], seconds: float = 20) -> None:
        async with asyncio.timeout(seconds):
            while not predicate():
                self.changed.clear()
                await self.changed.wait()


class Acp:
    """One client connected to one ``tether acp`` process."""

    def __init__(self, conn: ClientSideConnection, process: Any, editor: AcpEditor) -> None:
        self.conn, self.process, self.editor = conn, process, editor

    async def new(self) -> str:
        return (await self.conn.new_session(cwd=str(self.editor.workspace))).session_id

    async def prompt(self, session: str, text: str) -> str:
        response = await self.conn.prompt(session_id=session, prompt=[text_block(text)])
        return response.stop_reason


StartAcp = Callable[..., Awaitable[Acp]]


@pytest.fixture
async def start_acp(
    stub: ProviderStub, workspace: Path, home: Path, tmp_path: Path
) -> AsyncIterator[StartAcp]:
    """Start ``tether acp`` and initialize it as an editor would; several may run in turn."""
    async with contextlib.AsyncExitStack() as stack:

        async def start(reads: bool = True, writes: bool = True, **env: str) -> Acp:
            editor = AcpEditor(workspace)
            log = stack.enter_context((tmp_path / "acp-stderr.log").open("a"))
            conn, process = await stack.enter_async_context(
                spawn_agent_process(
                    cast(Client, editor),  # the fs and permission side; no terminals
                    *AGENT,
                    env=server_env(stub, home, **env),
                    cwd=workspace,
                    transport_kwargs={"stderr": log.fileno()},
                    use_unstable_protocol=True,
                )
            )
            fs = FileSystemCapabilities(read_text_file=reads, write_text_file=writes)
            await conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(fs=fs, terminal=False),
            )
            return Acp(conn, process, editor)

        yield start
