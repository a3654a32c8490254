"""Hostile bytes on the wire, end to end: a real ``tether serve`` over stdio, written to raw
(no LSP library in between), answers what it cannot read and goes on serving."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.e2e.conftest import SERVER, StartEditor, server_env
from tests.support.provider_stub import ProviderStub, text, tool_calls
from tether.lsp.framing import MAX_MESSAGE_BYTES

MiB = 2**20


def framed(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class RawClient:
    """One ``tether serve`` process, spoken to in bytes."""

    def __init__(
        self, process: asyncio.subprocess.Process, workspace: Path, log_kept: int | None = None
    ) -> None:
        self.process = process
        self.workspace = workspace
        self.next_id = 0
        self.stderr = asyncio.create_task(read_all(process.stderr, log_kept))

    async def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)
        await self.process.stdin.drain()

    async def receive(self, timeout: float = 10) -> dict[str, Any]:
        """The server's next message."""
        stdout = self.process.stdout
        assert stdout is not None
        async with asyncio.timeout(timeout):
            length = None
            while (line := await stdout.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            assert length is not None, "the server closed its output"
            answer: dict[str, Any] = json.loads(await stdout.readexactly(length))
            return answer

    async def send_request(self, method: str, params: Any) -> int:
        self.next_id += 1
        message = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        await self.send(framed(json.dumps(message).encode()))
        return self.next_id

    async def response(self, msg_id: int) -> dict[str, Any]:
        """The response to ``msg_id``; the server's notifications on the way are skipped."""
        while "method" in (message := await self.receive()):
            pass
        assert message["id"] == msg_id, message
        return message

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        return await self.response(await self.send_request(method, params))

    async def initialize(self) -> None:
        await self.initialized(await self.send_request("initialize", self.init_params()))

    def init_params(self) -> dict[str, Any]:
        return {"processId": None, "rootUri": self.workspace.as_uri(), "capabilities": {}}

    async def initialized(self, msg_id: int) -> None:
        assert "capabilities" in (await self.response(msg_id))["result"]
        await self.send(framed(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'))

    async def assert_serving(self) -> None:
        """A command still gets its answer."""
        command = {"command": "tether.sessions", "arguments": [{}]}
        answer = await self.request("workspace/executeCommand", command)
        assert answer["result"] == {"sessions": []}, answer

    def memory_kib(self, field: str) -> int:
        """``VmRSS`` (now) or ``VmHWM`` (the peak so far) of the server, in KiB."""
        status = Path(f"/proc/{self.process.pid}/status").read_text()
        line = next(line for line in status.splitlines() if line.startswith(f"{field}:"))
        return int(line.split()[1])


async def spawn(env: dict[str, str], workspace: Path, log_kept: int | None = None) -> RawClient:
    """A ``tether serve`` over stdio, not yet initialized; of its stderr, the last
    ``log_kept`` bytes are kept (all of it by default)."""
    process = await asyncio.create_subprocess_exec(
        *SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    return RawClient(process, workspace, log_kept)


async def stop(client: RawClient) -> None:
    """Kill the server if it still runs, and collect it."""
    if client.process.returncode is None:
        client.process.kill()
    await client.process.wait()
    client.stderr.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await client.stderr


@pytest.fixture
async def raw(stub: ProviderStub, home: Path, workspace: Path) -> AsyncIterator[RawClient]:
    client = await spawn(server_env(stub, home), workspace)
    try:
        yield client
    finally:
        await stop(client)


async def read_all(stream: asyncio.StreamReader | None, kept: int | None = None) -> str:
    """What the stream says until it ends, or its last ``kept`` bytes (a pipe left unread
    would block its writer)."""
    assert stream is not None
    said = bytearray()
    while chunk := await stream.read(MiB):
        said += chunk
        if kept is not None and len(said) > kept:
            del said[:-kept]
    return said.decode(errors="replace")


async def hang_up(client: RawClient) -> tuple[int, str]:
    """Close the server's input: its exit code and all it wrote to stderr."""
    assert client.process.stdin is not None
    client.process.stdin.close()
    async with asyncio.timeout(15):
        return await client.process.wait(), await client.stderr


def parse_error(message: dict[str, Any]) -> bool:
    return message["id"] is None and message["error"]["code"] == -32700


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(b"{this is not json", id="not-json"),
        pytest.param(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"', id="cut-short"),
        pytest.param(b"\xff\xfe\x00not utf-8", id="not-utf-8"),
        pytest.param(b"[" * 200_000, id="nested-too-deep"),
        pytest.param(b"", id="empty"),
    ],
)
async def test_a_body_that_is_not_json_is_answered_parse_error_and_the_server_goes_on(
    raw: RawClient, body: bytes
) -> None:
    await raw.send(framed(body))

    answer = await raw.receive()

    assert answer["jsonrpc"] == "2.0" and parse_error(answer), answer
    await raw.initialize()  # the stream is still in step: the next frame is read whole
    await raw.assert_serving()


@pytest.mark.parametrize(
    "header",
    [
        pytest.param(b"Content-Length: banana\r\n\r\n", id="not-a-number"),
        pytest.param(b"Content-Length: -5\r\n\r\n", id="negative"),
        pytest.param(b"Content-Type: application/json\r\n\r\n", id="no-length"),
        pytest.param(b"Content-Length: 5\r\nContent-Length: 6\r\n\r\n", id="two-lengths"),
        pytest.param(b"no colon here\r\n\r\n", id="not-a-header"),
        pytest.param(b"X-Long: " + b"x" * (4 * MiB) + b"\r\n\r\n", id="endless-line"),
        # A body after a header block that had no length runs into the next frame's
        # header line; the server finds its place again at that frame's Content-Length.
        pytest.param(
            b'Content-Length: nope\r\n\r\n{"jsonrpc": "2.0", "id": 7, "method": "shutdown"}',
            id="body-without-length",
        ),
    ],
)
async def test_a_header_without_a_valid_content_length_is_answered_and_skipped(
    raw: RawClient, header: bytes
) -> None:
    await raw.send(header)
    initialize = await raw.send_request("initialize", raw.init_params())  # right behind it

    answer = await raw.receive()

    assert answer["id"] is None and answer["error"]["code"] == -32600, answer
    assert answer["error"]["message"].startswith("invalid message header: ")
    await raw.initialized(initialize)  # the next message: the one after the bad header
    await raw.assert_serving()


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/status")
async def test_a_huge_content_length_is_refused_at_once_and_nothing_is_allocated_for_it(
    raw: RawClient,
) -> None:
    await raw.initialize()
    await raw.assert_serving()  # the service is built (after `initialize` was answered)
    peak_before = raw.memory_kib("VmHWM")

    await raw.send(b"Content-Length: %d\r\n\r\n" % 2**40)  # 1 TiB, of which a little follows
    answer = await raw.receive(timeout=5)  # at once: before any of the body has come

    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert answer["error"]["message"] == (
        f"message too large: {2**40} bytes; the limit is {MAX_MESSAGE_BYTES} bytes"
    )
    for _ in range(32):
        await raw.send(b" " * MiB)  # drained: the server has read (and dropped) nearly all
    # Had the server kept what came (or sized a buffer by the header), its peak would have
    # grown by at least the 32 MiB it read.
    assert raw.memory_kib("VmHWM") - peak_before < 16 * 1024
    assert raw.process.returncode is None
    # The server waits for the rest of its terabyte; hung up on, it ends normally, not
    # killed (a MemoryError or a kill would be another exit code, or a traceback).
    code, log = await hang_up(raw)
    assert code == 0 and "Traceback" not in log and "MemoryError" not in log, log


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc/PID/status")
async def test_an_oversized_message_is_dropped_as_it_arrives_and_the_stream_stays_in_step(
    raw: RawClient,
) -> None:
    await raw.initialize()
    await raw.assert_serving()  # the service is built (after `initialize` was answered)
    peak_before = raw.memory_kib("VmHWM")
    size = MAX_MESSAGE_BYTES + 1

    await raw.send(b"Content-Length: %d\r\n\r\n" % size)
    answer = await raw.receive(timeout=5)
    assert answer["id"] is None and answer["error"]["code"] == -32600
    assert answer["error"]["message"].startswith(f"message too large: {size} bytes")
    sent = 0
    while sent < size:
        piece = min(4 * MiB, size - sent)
        await raw.send(b"x" * piece)
        sent += piece

    await raw.assert_serving()  # the next message is read from its own first byte
    assert raw.memory_kib("VmHWM") - peak_before < 32 * 1024


async def test_exit_sent_right_behind_shutdown_waits_for_it(raw: RawClient) -> None:
    await raw.initialize()
    shutdown = await raw.send_request("shutdown", None)
    await raw.send(framed(b'{"jsonrpc": "2.0", "method": "exit"}'))  # not waiting for it

    assert (await raw.response(shutdown))["result"] is None
    code, log = await hang_up(raw)
    assert code == 0 and "Traceback" not in log, log


async def test_a_document_whose_uri_holds_a_nul_is_no_file_and_every_read_goes_on(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "notes.txt").write_text("alpha\n")
    (editor.workspace / "draft.py").write_text("on_disk = True\n")
    editor.client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri="file:///tmp/x%00y.py", language_id="python", version=1, text="nul = 1\n"
            )
        )
    )
    editor.open("draft.py", "in_the_buffer = True\n")
    stub.script(
        tool_calls(("fs-read", {"path": "notes.txt"}), ("fs-read", {"path": "draft.py"})),
        text("read both"),
    )

    result = await editor.run("read both")

    assert result["status"] == "done", result
    notes, draft = [m for m in stub.requests[1]["messages"] if m["role"] == "tool"]
    assert "alpha" in notes["content"]
    assert "in_the_buffer" in draft["content"] and "on_disk" not in draft["content"]
    statuses = [u["status"] for u in editor.updates if u["kind"] == "tool_result"]
    assert statuses == ["ok", "ok"]


# What the LSP fuzz campaign (tests/reliability/lsp_fuzz.py, seed 20261201) found, each as
# the one message that reproduces it: before the fix the server answered it not at all,
# with an internal error (a traceback in its data), or carried it out (an `exit` sent with
# an id ended the server, 29 times in the bounded run).
FOUND = [
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 19, "method": "exit", "params": "9b"}',
        19,
        -32600,
        id="exit-with-id",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 7, "method": "initialized", "params": {}}',
        7,
        -32600,
        id="initialized-with-id",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": -0.0, "method": "textDocument/hover", "params": {}}',
        None,
        -32600,
        id="float-id",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": [1], "method": "workspace/executeCommand", "params": {}}',
        None,
        -32600,
        id="list-id",
    ),
    pytest.param(b'{"jsonrpc": "2.0", "id": null, "method": "nope"}', None, -32600, id="null-id"),
    pytest.param(
        b'{"jsonrpc": "2.0", "method": true, "id": "m68"}', "m68", -32600, id="method-not-a-string"
    ),
    pytest.param(b'{"jsonrpc": "2.0", "params": {}}', None, -32600, id="neither"),
    pytest.param(b'{"jsonrpc": "2.0", "id": 5, "method": "x"}', 5, -32601, id="no-params"),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": "\xed\xa0\xbd", "method": "x"}',
        None,
        -32700,
        id="utf-8-surrogate",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"capabilities": {}}}',
        9,
        -32600,
        id="initialize-again",
    ),
    pytest.param(
        b'{"jsonrpc": "2.0", "id": 10, "method": "workspace/executeCommand", "params": '
        b'{"command": "tether.cancel", "arguments": [{"session": "\\ud83d"}]}}',
        10,
        -32602,
        id="lone-surrogate-argument",
    ),
]


@pytest.mark.parametrize(("body", "msg_id", "code"), FOUND)
async def test_what_the_fuzz_found_is_answered_once_with_a_clear_error_and_the_server_goes_on(
    raw: RawClient, body: bytes, msg_id: Any, code: int
) -> None:
    await raw.initialize()

    await raw.send(framed(body))
    answer = await raw.response(msg_id)

    assert answer["error"]["code"] == code, answer
    assert "data" not in answer["error"]  # no traceback
    await raw.assert_serving()  # the next request is the next answer: nothing else came
    assert raw.process.returncode is None


async def test_a_request_written_just_before_initialize_is_refused_not_run_after_it(
    raw: RawClient,
) -> None:
    # The campaign's short-lived servers: `tether.sessions` written in the same breath as
    # `initialize`, ahead of it, got a result (its handler ran once `initialize` had).
    sessions = {"command": "tether.sessions", "arguments": [{}]}
    early = await raw.send_request("workspace/executeCommand", sessions)
    initialize = await raw.send_request("initialize", raw.init_params())

    answer = await raw.response(early)

    assert answer["error"]["code"] == -32002, answer
    await raw.initialized(initialize)
    await raw.assert_serving()
