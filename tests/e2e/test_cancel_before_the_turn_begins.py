"""``$/cancelRequest`` on a ``tether.run`` while the server sets its turn up (reliability
campaign ``cancel``, seed 20261201: a cancel sent at once after the request).

The server asks the editor for a progress token (``window/workDoneProgress/create``, a
round trip) before the turn began. A cancel in that window found no turn: pygls
answered the request ``RequestCancelled`` and went on running the handler, so the turn
ran behind that answer, unseen and beyond any cancel, and the session stayed busy; on
a parked session the cancel gave up the parked turn instead of the one asked for, and
the new one ran. (``tether.cancel`` in that window was lost the same way.) A raw client
sends the cancel as the progress request arrives, before it answers it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import SERVER, server_env
from tests.reliability.harness import Answering, Wire, last_user_text
from tests.support.loopback import Scripted
from tests.support.provider_stub import ProviderStub, hang, text, tool_calls

PROGRESS_CREATE = "window/workDoneProgress/create"


class Editor:
    """A raw LSP client of one ``tether serve``: it sees each message the server sends, and
    answers what the server asks on the way (progress tokens; dialogs, dismissed)."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0
        self.log = asyncio.create_task(drain(process.stderr))

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await self.process.stdin.drain()

    async def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        async with asyncio.timeout(10):
            length = 0
            while (line := await self.process.stdout.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            assert length, "the server closed its output"
            message: dict[str, Any] = json.loads(await self.process.stdout.readexactly(length))
            return message

    async def request(self, method: str, params: Any) -> int:
        self.next_id += 1
        await self.send({"id": self.next_id, "method": method, "params": params})
        return self.next_id

    async def answer(self, message: dict[str, Any]) -> None:
        await self.send({"id": message["id"], "result": None})

    async def until_answered(self, msg_id: int) -> dict[str, Any]:
        while True:
            message = await self.receive()
            if message.get("id") == msg_id and "method" not in message:
                return message
            if "method" in message and "id" in message:
                await self.answer(message)

    async def initialize(self, workspace: Path) -> None:
        capabilities = {"window": {"workDoneProgress": True}}
        params = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": capabilities}
        await self.until_answered(await self.request("initialize", params))
        await self.send({"method": "initialized", "params": {}})

    async def command(self, name: str, argument: dict[str, Any]) -> dict[str, Any]:
        params = {"command": name, "arguments": [argument]}
        return await self.until_answered(await self.request("workspace/executeCommand", params))

    async def run_cancelled_as_it_begins(self, argument: dict[str, Any]) -> dict[str, Any]:
        """``tether.run``, cancelled while the server waits for its progress token."""
        params = {"command": "tether.run", "arguments": [argument]}
        run = await self.request("workspace/executeCommand", params)
        while (message := await self.receive()).get("method") != PROGRESS_CREATE:
            assert message.get("id") != run, f"answered before the progress: {message}"
        await self.send({"method": "$/cancelRequest", "params": {"id": run}})
        await self.answer(message)
        return await self.until_answered(run)


async def drain(stream: asyncio.StreamReader | None) -> None:
    """The server's log, read and dropped (a pipe left unread would block its writer)."""
    while stream is not None and await stream.read(2**16):
        pass


@pytest.fixture
async def editor(stub: ProviderStub, home: Path, workspace: Path) -> AsyncIterator[Editor]:
    process = await asyncio.create_subprocess_exec(
        *SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(stub, home),
    )
    editor = Editor(process)
    try:
        await editor.initialize(workspace)
        yield editor
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
        editor.log.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await editor.log


def policy(messages: list[dict[str, Any]], system: str, wire: Wire) -> Scripted:
    """A prompt named ``slow`` hangs at the provider; any other is answered at once."""
    if last_user_text(messages) == "slow":
        return hang(30)
    return text("answered")


@pytest.fixture
def answering(stub: ProviderStub) -> ProviderStub:
    stub.script(*[Answering(policy, "openai")] * 20)
    return stub


async def test_a_run_cancelled_as_its_turn_is_set_up_ends_cancelled_and_frees_the_session(
    editor: Editor, answering: ProviderStub
) -> None:
    first = await editor.command("tether.run", {"prompt": "first"})
    session = first["result"]["session"]

    answer = await editor.run_cancelled_as_it_begins({"prompt": "slow", "session": session})
    after = await editor.command("tether.run", {"prompt": "second", "session": session})

    assert answer["result"]["status"] == "cancelled", answer
    assert after["result"]["status"] == "done", after


async def test_a_cancel_as_the_turn_is_set_up_ends_that_turn_not_the_parked_one(
    editor: Editor, stub: ProviderStub
) -> None:
    stub.script(tool_calls(("command", {"command": "echo hi"})), hang(30), text("done"))
    parked = (await editor.command("tether.run", {"prompt": "park"}))["result"]
    assert parked["status"] == "awaiting_approval", parked
    session = parked["session"]

    answer = await editor.run_cancelled_as_it_begins({"prompt": "slow", "session": session})

    assert answer["result"]["status"] == "cancelled", answer
    sessions = (await editor.command("tether.sessions", {}))["result"]["sessions"]
    assert [s["status"] for s in sessions] == ["cancelled"]
    history = (await editor.command("tether.history", {"session": session}))["result"]
    answered = [m["call_id"] for m in history["messages"] if m["role"] == "tool"]
    assert answered == [c["call_id"] for c in parked["pending"]] and history["pending"] == []
