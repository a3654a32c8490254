"""The ACP front under faults: bad lines, unknown methods, a busy session, a client that
hangs up in the middle of a turn."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError

from tests.e2e.acp.conftest import AGENT, StartAcp
from tests.e2e.conftest import server_env
from tests.support.provider_stub import ProviderStub, hang, text, tool_calls


class Raw:
    """``tether acp`` spoken to line by line, as a broken client would."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        await self.process.stdin.drain()

    async def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        async with asyncio.timeout(20):
            return dict(json.loads(await self.process.stdout.readline()))


@pytest.fixture
async def raw(stub: ProviderStub, home: Path, workspace: Path) -> Any:
    process = await asyncio.create_subprocess_exec(
        *AGENT,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=server_env(stub, home),
        cwd=workspace,
    )
    yield Raw(process)
    if process.returncode is None:
        process.kill()
        await process.wait()


async def test_bad_lines_are_answered_and_the_connection_goes_on(raw: Raw) -> None:
    await raw.send(b"this is not json")
    not_json = await raw.answer()
    await raw.send(b"[1, 2, 3]")
    not_an_object = await raw.answer()
    await raw.send(b'{"jsonrpc": "2.0", "id": {"x": 1}, "method": "initialize"}')
    bad_id = await raw.answer()
    await raw.send(b'{"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": "no"}')
    bad_params = await raw.answer()
    await raw.send(
        b'{"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": {"protocolVersion": 1}}'
    )
    good = await raw.answer()

    assert not_json["id"] is None and not_json["error"]["code"] == -32700
    assert not_an_object["id"] is None and not_an_object["error"]["code"] == -32600
    assert bad_id["id"] is None and bad_id["error"]["code"] == -32600
    assert bad_params["id"] == 7 and bad_params["error"]["code"] == -32602
    assert good["id"] == 8 and good["result"]["agentCapabilities"]["loadSession"] is True


async def test_a_line_past_the_limit_is_refused_without_being_kept(raw: Raw) -> None:
    # 64 MiB and a bit, sent in pieces: refused once the newline comes, and served on.
    piece = b"x" * 2**20
    for _ in range(65):
        assert raw.process.stdin is not None
        raw.process.stdin.write(piece)
        await raw.process.stdin.drain()
    await raw.send(b"")
    too_long = await raw.answer()
    await raw.send(b'{"jsonrpc": "2.0", "id": 1, "method": "session/list", "params": {}}')
    listed = await raw.answer()

    assert too_long["error"]["code"] == -32600 and "longer than" in too_long["error"]["message"]
    assert listed["id"] == 1 and listed["result"]["sessions"] == []


async def test_requests_sent_just_before_stdin_closes_are_still_answered(raw: Raw) -> None:
    await raw.send(
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}'
    )
    await raw.send(b'{"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {}}')
    assert raw.process.stdin is not None
    raw.process.stdin.close()

    answers = {(await raw.answer())["id"], (await raw.answer())["id"]}

    assert answers == {1, 2}
    async with asyncio.timeout(20):
        assert await raw.process.wait() == 0


async def test_unknown_methods_are_answered_method_not_found(raw: Raw) -> None:
    await raw.send(b'{"jsonrpc": "2.0", "id": 1, "method": "session/teleport", "params": {}}')
    unknown = await raw.answer()
    await raw.send(b'{"jsonrpc": "2.0", "method": "session/whisper", "params": {}}')
    await raw.send(b'{"jsonrpc": "2.0", "id": 2, "method": "_tether/secret", "params": {}}')
    extension = await raw.answer()

    assert unknown["id"] == 1 and unknown["error"]["code"] == -32601
    assert extension["id"] == 2 and extension["error"]["code"] == -32601


async def test_a_second_prompt_while_one_runs_is_refused(
    start_acp: StartAcp, stub: ProviderStub
) -> None:
    acp = await start_acp()
    stub.script(hang(30))
    session = await acp.new()
    running = asyncio.create_task(acp.prompt(session, "first"))
    await stub.wait_for_requests_async(1, timeout=20)

    with pytest.raises(RequestError) as busy:
        await acp.prompt(session, "second")

    assert busy.value.code == -32602 and "already running" in str(busy.value)
    await acp.conn.cancel(session_id=session)
    async with asyncio.timeout(10):
        assert await running == "cancelled"


async def test_a_client_that_hangs_up_mid_turn_leaves_every_call_answered(
    start_acp: StartAcp, stub: ProviderStub, workspace: Path
) -> None:
    first = await start_acp()
    stub.script(tool_calls(("command", {"command": "touch never.txt"})))
    first.editor.hold_questions = True
    session = await first.new()
    asyncio.create_task(first.prompt(session, "then hang up"))  # noqa: RUF006
    await first.editor.wait_for(lambda: bool(first.editor.asked))

    assert first.process.stdin is not None
    first.process.stdin.close()  # the client's end of stdin: gone
    async with asyncio.timeout(15):
        assert await first.process.wait() == 0

    assert not (workspace / "never.txt").exists()
    second = await start_acp()
    await second.conn.load_session(cwd=str(workspace), session_id=session)
    (result,) = second.editor.of("tool_call_update", session)
    assert result.status == "failed" and "cancel" in result.content[0].content.text
    stub.script(text("still here"))
    assert await second.prompt(session, "go on") == "end_turn"


async def test_nothing_but_acp_reaches_stdout(
    stub: ProviderStub, home: Path, workspace: Path
) -> None:
    # A Python that prints as it starts, before tether serves, and as it exits, after.
    site = workspace.parent / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import atexit\nprint('stray output from the interpreter')\n"
        "atexit.register(print, 'printed at exit')\n"
    )
    env = server_env(stub, home, PYTHONPATH=str(site))
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import sys; from tether.cli import main; "
        "print('printed before serving'); sys.exit(main(['acp']))",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
        cwd=workspace,
    )
    request = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}}'
    )
    out, err = await asyncio.wait_for(process.communicate(request + b"\n"), 30)

    assert b"stray output" in out and b"printed before" in out  # before `acp` began
    served = out.split(b"printed before serving\n", 1)[1]
    (line,) = served.splitlines()  # from then on: the protocol only
    assert json.loads(line)["id"] == 1 and process.returncode == 0
    assert b"printed at exit" in err
