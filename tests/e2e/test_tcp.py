"""``tether serve --tcp``, end to end: a real server, real sockets, the token in its real file.

Clients that do not hold the token are spoken to in raw bytes; the client that does is a
pytest-lsp client, as an editor would be.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities
from pytest_lsp.client import LanguageClient, make_test_lsp_client

from tests.e2e.conftest import SERVER, server_env
from tests.support.provider_stub import ProviderStub, text


@dataclass
class TcpServer:
    """A ``tether serve --tcp`` process, and what it printed."""

    process: asyncio.subprocess.Process
    workspace: Path
    host: str
    port: int
    token_file: Path
    said: list[str] = field(default_factory=list)  # its stderr, line by line, as it comes

    @property
    def token(self) -> str:
        return self.token_file.read_text().strip()

    async def client(self, token: str | None = None) -> LanguageClient:
        """A pytest-lsp client, initialized with ``token`` (by default the right one)."""
        client = make_test_lsp_client()
        await client.start_tcp(self.host, self.port)
        options = {"tether": {"token": self.token if token is None else token}}
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities("neovim"),
                root_uri=self.workspace.as_uri(),
                initialization_options=options,
            )
        )
        return client

    async def wait(self) -> int:
        async with asyncio.timeout(15):
            return await self.process.wait()


async def start_tcp_server(
    stub: ProviderStub, home: Path, workspace: Path, address: str = "127.0.0.1:0", *args: str
) -> TcpServer:
    """Start ``tether serve --tcp ADDRESS`` and read where it listens from its stderr."""
    process = await asyncio.create_subprocess_exec(
        *SERVER, "--tcp", address, *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(stub, home),
    )  # fmt: skip
    assert process.stderr is not None
    said: list[str] = []
    listening: tuple[str, int] | None = None
    try:
        async with asyncio.timeout(20):
            while not (said and said[-1].startswith("token file: ")):
                line = (await process.stderr.readline()).decode()
                assert line, f"the server ended: {''.join(said)}"
                said.append(line.rstrip("\n"))
                if line.startswith("listening on "):
                    host, _, port = line.removeprefix("listening on ").strip().rpartition(":")
                    listening = (host, int(port))
        assert listening is not None
    except BaseException:
        if process.returncode is None:
            process.kill()
        await process.wait()
        raise
    token_file = Path(said[-1].removeprefix("token file: "))
    server = TcpServer(process, workspace, *listening, token_file, said)
    _keep_reading[process.pid] = asyncio.create_task(_read_on(process.stderr, server.said))
    return server


_keep_reading: dict[int, asyncio.Task[None]] = {}


async def _read_on(stream: asyncio.StreamReader, said: list[str]) -> None:
    """Keep the server's stderr flowing (a full pipe would block it), kept for the test."""
    while line := await stream.readline():
        said.append(line.decode().rstrip("\n"))


@contextlib.asynccontextmanager
async def tcp_server(
    stub: ProviderStub, home: Path, workspace: Path, address: str = "127.0.0.1:0", *args: str
) -> AsyncIterator[TcpServer]:
    server = await start_tcp_server(stub, home, workspace, address, *args)
    try:
        yield server
    finally:
        if server.process.returncode is None:
            server.process.kill()
        await server.process.wait()
        await _keep_reading.pop(server.process.pid)


class Raw:
    """A connection spoken to in bytes."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    @classmethod
    async def connect(cls, server: TcpServer) -> Raw:
        return cls(*await asyncio.open_connection(server.host, server.port))

    async def send(self, message: dict[str, Any] | bytes) -> None:
        body = message if isinstance(message, bytes) else json.dumps(message).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await self.writer.drain()

    async def answer_then_hang_up(self) -> dict[str, Any]:
        """The one message the server sends, after which it closes the connection."""
        async with asyncio.timeout(10):
            received = await self.reader.read()  # to the end: the server hangs up
        self.writer.close()
        head, _, body = received.partition(b"\r\n\r\n")
        assert head.lower().startswith(b"content-length: "), received
        assert int(head.split(b":")[1]) == len(body), received  # one message, nothing else
        answer: dict[str, Any] = json.loads(body)
        return answer


def initialize(msg_id: int | str, options: Any = None) -> dict[str, Any]:
    params: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": {}}
    if options is not None:
        params["initializationOptions"] = options
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": params}


async def sessions(client: LanguageClient) -> Any:
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="tether.sessions", arguments=[{}])
    )


async def test_it_prints_its_port_and_its_token_file_which_only_its_owner_can_read(
    stub: ProviderStub, home: Path, workspace: Path
) -> None:
    async with tcp_server(stub, home, workspace) as server:
        assert server.host == "127.0.0.1" and server.port > 0
        assert server.said[-2] == f"listening on 127.0.0.1:{server.port}"
        assert server.token_file == home / "tcp-token"
        assert len(server.token) >= 32
        if sys.platform != "win32":
            assert server.token_file.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("first", "code", "says"),
    [
        pytest.param(initialize(1), -32600, "unauthorized", id="no-token"),
        pytest.param(initialize(1, {"tether": {"token": "guess"}}), -32600, "token", id="wrong"),
        pytest.param(initialize(1, {"tether": {"token": 12345}}), -32600, "token", id="a-number"),
        pytest.param(initialize(1, ["token"]), -32600, "token", id="options-not-an-object"),
        pytest.param(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "workspace/executeCommand",
                "params": {"command": "tether.run", "arguments": [{"prompt": "rm -rf ~"}]},
            },
            -32002,
            "initialize",
            id="no-initialize",
        ),
        pytest.param(b"{not json", -32700, "JSON", id="not-json"),
        pytest.param(b"x" * (2 * 2**20), -32600, "too large", id="too-large"),
    ],
)
async def test_a_client_without_the_token_is_answered_and_hung_up_on_and_the_server_serves_on(
    stub: ProviderStub,
    home: Path,
    workspace: Path,
    first: dict[str, Any] | bytes,
    code: int,
    says: str,
) -> None:
    async with tcp_server(stub, home, workspace) as server:
        stranger = await Raw.connect(server)
        await stranger.send(first)

        answer = await stranger.answer_then_hang_up()

        assert answer["error"]["code"] == code and says in answer["error"]["message"], answer
        assert answer["id"] == (1 if isinstance(first, dict) else None)
        assert server.token not in json.dumps(answer)
        assert stub.requests == []  # nothing ran
        client = await server.client()
        assert await sessions(client) == {"sessions": []}
        await client.shutdown_session()
        assert await server.wait() == 0


async def test_other_connections_do_not_disturb_the_client_being_served(
    stub: ProviderStub, home: Path, workspace: Path
) -> None:
    async with tcp_server(stub, home, workspace) as server:
        editor = await server.client()

        stranger = await Raw.connect(server)
        await stranger.send(initialize(1))
        refused = await stranger.answer_then_hang_up()
        twin = await Raw.connect(server)  # the token is right, but a client is served
        await twin.send(initialize("twin", {"tether": {"token": server.token}}))
        taken = await twin.answer_then_hang_up()
        silent = await Raw.connect(server)  # connects, says nothing, hangs up
        silent.writer.close()

        assert "unauthorized" in refused["error"]["message"]
        assert taken["id"] == "twin" and "already serves a client" in taken["error"]["message"]
        # The served client's answers still come to it, and the server is still there.
        assert await sessions(editor) == {"sessions": []}
        stub.script(text("still served"))
        result = await editor.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tether.run", arguments=[{"prompt": "hi"}])
        )
        assert result is not None
        assert result["status"] == "done" and result["answer"] == "still served"
        await editor.shutdown_session()
        assert await server.wait() == 0  # `exit` from the served client ends the server


async def test_a_bad_frame_from_the_served_client_is_answered_and_it_is_served_on(
    stub: ProviderStub, home: Path, workspace: Path
) -> None:
    async with tcp_server(stub, home, workspace) as server:
        raw = await Raw.connect(server)
        await raw.send(initialize(1, {"tether": {"token": server.token}}))
        await raw.send(b"{not json")
        raw.writer.write(b"Content-Length: %d\r\n\r\n" % 2**40)  # and then a little
        raw.writer.write(b" " * 2**16)
        messages: list[dict[str, Any]] = []
        async with asyncio.timeout(10):
            while len(messages) < 3:
                head = await raw.reader.readuntil(b"\r\n\r\n")
                length = int(head.split(b":")[1].split(b"\r\n")[0])
                messages.append(json.loads(await raw.reader.readexactly(length)))
        answered, not_json, too_large = messages
        assert answered["id"] == 1 and "capabilities" in answered["result"]
        assert not_json["id"] is None and not_json["error"]["code"] == -32700
        assert too_large["id"] is None and too_large["error"]["code"] == -32600
        assert server.process.returncode is None
        raw.writer.close()
        assert await server.wait() == 0  # the served client hung up: the server ends


@pytest.mark.parametrize("address", ["0.0.0.0:0", "[::]:0"])
async def test_a_non_loopback_address_is_refused_without_allow_remote(
    stub: ProviderStub, home: Path, address: str
) -> None:
    process = await asyncio.create_subprocess_exec(
        *SERVER, "--tcp", address,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=server_env(stub, home),
    )  # fmt: skip
    async with asyncio.timeout(20):
        out, err = await process.communicate()

    assert process.returncode == 2 and out == b""
    said = err.decode()
    assert "not a loopback address" in said and "--allow-remote" in said
    assert "Traceback" not in said
    assert not (home / "tcp-token").exists()


async def test_allow_remote_lets_it_listen_on_every_address(
    stub: ProviderStub, home: Path, workspace: Path
) -> None:
    async with tcp_server(stub, home, workspace, "0.0.0.0:0", "--allow-remote") as server:
        assert server.host == "0.0.0.0"
        server.host = "127.0.0.1"
        client = await server.client()
        assert await sessions(client) == {"sessions": []}
        await client.shutdown_session()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
async def test_ctrl_c_ends_it_quietly(stub: ProviderStub, home: Path, workspace: Path) -> None:
    async with tcp_server(stub, home, workspace) as server:
        stranger = await Raw.connect(server)  # one still at the door
        editor = await server.client()  # and one served

        server.process.send_signal(signal.SIGINT)

        assert await server.wait() == 130
        await _keep_reading[server.process.pid]
        assert not any("Traceback" in line for line in server.said), server.said
        stranger.writer.close()
        with contextlib.suppress(ConnectionError):
            await editor.stop()


async def test_the_token_is_never_logged(stub: ProviderStub, home: Path, workspace: Path) -> None:
    async with tcp_server(stub, home, workspace, "127.0.0.1:0", "--log-level", "DEBUG") as server:
        token = server.token
        stranger = await Raw.connect(server)
        await stranger.send(initialize(1, {"tether": {"token": token[:-1]}}))
        await stranger.answer_then_hang_up()
        editor = await server.client()
        assert await sessions(editor) == {"sessions": []}
        await editor.shutdown_session()
        assert await server.wait() == 0
        await _keep_reading[server.process.pid]

        log = "\n".join(server.said)
        assert "Sending data" in log  # DEBUG: pygls logs every message it sends
        assert token not in log and token[:-1] not in log
