"""The provider fails: retries, then a clear error; never a stack trace."""

from __future__ import annotations

import socket
from pathlib import Path

from tests.e2e.conftest import StartEditor, server_env
from tests.support.provider_stub import ProviderStub, error, text

FAST_RETRIES = {"tether": {"provider": {"retry_base_s": 0.01, "max_retries": 3}}}


async def test_429_and_500_are_retried_then_the_turn_succeeds(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    stub.script(error(429, "slow down", retry_after=0), error(500, "oops"), text("made it"))
    editor = await start_editor(options=FAST_RETRIES)

    result = await editor.run("hello")

    assert result["status"] == "done" and result["answer"] == "made it"
    assert len(stub.requests) == 3
    assert stub.requests[0] == stub.requests[2]


async def test_a_provider_that_keeps_failing_ends_the_turn_with_its_message(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    stub.script(*[error(503, "the model is overloaded")] * 4)
    editor = await start_editor(options=FAST_RETRIES)

    result = await editor.run("hello")

    assert result["status"] == "error"
    assert "HTTP 503" in result["error"] and "the model is overloaded" in result["error"]
    assert len(stub.requests) == 4
    history = await editor.history(result["session"])
    assert [m["role"] for m in history["messages"]] == ["user"]
    sessions = (await editor.command("tether.sessions", {}))["sessions"]
    assert sessions[0]["status"] == "error"


async def test_an_unreachable_provider_says_which_variable_to_set(
    start_editor: StartEditor, stub: ProviderStub, home: Path
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    editor = await start_editor(
        options=FAST_RETRIES, env=server_env(stub, home, TETHER_BASE_URL=closed)
    )

    result = await editor.run("hello")

    assert result["status"] == "error"
    assert closed in result["error"] and "TETHER_BASE_URL" in result["error"]
    assert "Traceback" not in result["error"]


async def test_no_model_configured_says_to_set_tether_model(
    start_editor: StartEditor, stub: ProviderStub, home: Path
) -> None:
    env = server_env(stub, home)
    del env["TETHER_MODEL"]
    editor = await start_editor(env=env)

    result = await editor.run("hello")

    assert result["status"] == "error"
    assert result["error"].startswith("no model configured: set TETHER_MODEL")
    assert stub.requests == []
