"""Malformed LSP input is answered with JSON-RPC errors; the server stays up."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import Editor, StartEditor, server_env
from tests.support.provider_stub import ProviderStub, error, text


async def assert_alive(editor: Editor) -> None:
    assert "sessions" in await editor.command("tether.sessions", {})


@pytest.mark.parametrize(
    ("command", "arguments", "expected"),
    [
        ("tether.nope", [{}], "tether.nope"),
        ("tether.run", [], "one JSON object"),
        ("tether.run", [{"prompt": "a"}, {"prompt": "b"}], "one JSON object"),
        ("tether.run", ["just a string"], "one JSON object"),
        ("tether.run", [{"prompt": 5}], "prompt"),
        ("tether.run", [{"prompt": ""}], "prompt"),
        ("tether.run", [{"prompt": "hi", "colour": "red"}], "colour"),
        ("tether.run", [{"prompt": "hi", "session": "nope"}], "unknown session 'nope'"),
        ("tether.history", [{"session": "nope"}], "unknown session 'nope'"),
        ("tether.history", [{}], "session"),
        ("tether.cancel", [{"session": 7}], "session"),
    ],
)
async def test_bad_commands_get_json_rpc_errors(
    start_editor: StartEditor, command: str, arguments: list[Any], expected: str
) -> None:
    editor = await start_editor()
    with pytest.raises(JsonRpcException) as raised:
        await editor.command(command, *arguments)
    assert expected in raised.value.message
    await assert_alive(editor)


async def test_garbage_on_the_wire_does_not_bring_the_server_down(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    process = editor.client._server
    assert process is not None and process.stdin is not None
    for body in (b"{this is not json", b'{"jsonrpc": "2.0", "id": 99, "method": 12}', b"[]"):
        process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    await process.stdin.drain()

    await assert_alive(editor)
    stub.script(text("still here"))
    assert (await editor.run("hello"))["answer"] == "still here"


async def test_a_bad_environment_variable_is_named_and_costs_no_other_setting(
    start_editor: StartEditor, stub: ProviderStub, home: Path
) -> None:
    env = server_env(stub, home, TETHER_PROVIDER="ollama")
    editor = await start_editor(env=env)
    stub.script(text("still answering"))

    result = await editor.run("hello")

    (shown,) = editor.client.messages
    assert shown.type == types.MessageType.Warning
    assert shown.message.startswith("tether: `TETHER_PROVIDER` (setting `provider.kind`)")
    assert "'ollama'" in shown.message
    # TETHER_MODEL, TETHER_BASE_URL and TETHER_HOME still hold: the turn runs, kept at home.
    assert result["status"] == "done" and result["answer"] == "still answering"
    assert (home / "sessions.sqlite3").exists()


async def test_warnings_reach_the_editors_log(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"provider": {"retry_base_s": 0.01}}})
    stub.script(error(429, "slow down", retry_after=0), text("fine"))

    await editor.run("hello")

    (warning,) = [m for m in editor.client.log_messages if "HTTP 429" in m.message]
    assert warning.type == types.MessageType.Warning and "retrying" in warning.message


async def test_a_store_that_cannot_open_is_told_and_each_request_says_why(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    """The service is built once `initialize` is answered: what stops it from being built
    reaches the person, in a message and in the answer to every request."""
    home = tmp_path / "a-file"
    home.write_text("not a folder\n")
    editor = await start_editor(env=server_env(stub, home))

    with pytest.raises(JsonRpcException) as raised:
        await editor.command("tether.sessions", {})

    assert raised.value.message.startswith("tether could not start: ")
    (shown,) = [m for m in editor.client.messages if m.type == types.MessageType.Error]
    assert shown.message.startswith("tether could not start: ")
