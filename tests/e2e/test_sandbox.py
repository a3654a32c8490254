"""Commands in the sandbox (bubblewrap), end to end with real bwrap: what a sandboxed command
can and cannot do, what the person is asked, and what is said when there is no sandbox."""

from __future__ import annotations

import asyncio
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Editor, StartEditor, server_env
from tests.support.provider_stub import ProviderStub, hang, text, tool_calls

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="the sandbox is bubblewrap, on Linux (.ci/run installs it)",
)


@pytest.fixture
def real_dir() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (the sandbox's /tmp is its own)."""
    with tempfile.TemporaryDirectory(prefix="tether-sandbox-test-", dir="/var/tmp") as path:
        yield Path(path)


def answers(stub: ProviderStub, request: int = 1) -> list[str]:
    return [m["content"] for m in stub.requests[request]["messages"] if m["role"] == "tool"]


async def start(
    start_editor: StartEditor, stub: ProviderStub, home: Path, fake_home: Path, **tether: Any
) -> Editor:
    """A server whose person's home is ``fake_home`` (outside /tmp, so only the sandbox's
    own home directory can hide it)."""
    env = server_env(stub, home, HOME=str(fake_home))
    return await start_editor(env=env, options={"tether": tether} if tether else None)


async def test_a_sandboxed_command_works_in_the_workspace_and_nowhere_else(
    start_editor: StartEditor, stub: ProviderStub, home: Path, real_dir: Path
) -> None:
    fake_home = real_dir / "home"
    fake_home.mkdir()
    (fake_home / ".ssh").mkdir()
    (fake_home / ".ssh" / "id_ed25519").write_text("SECRET KEY\n")
    outside = real_dir / "outside.txt"
    editor = await start(start_editor, stub, home, fake_home)
    ws = editor.workspace
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / "test_small.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    stub.script(
        tool_calls(
            ("command", {"command": f"{sys.executable} -m pytest -q -p cacheprovider"}),
            ("command", {"command": f"echo escaped > {outside}"}),
            ("command", {"command": "cat ~/.ssh/id_ed25519"}),
            ("command", {"command": "echo planted > .git/hooks/pre-commit"}),
        ),
        text("done"),
    )
    editor.answers = ["Allow"] * 4

    result = await editor.run("try things")

    assert result["status"] == "done"
    tests, escape, secret, hook = answers(stub)
    assert tests.startswith("exit code: 0") and "1 passed" in tests
    assert (ws / ".pytest_cache").is_dir()  # it wrote its cache in the workspace
    assert "Read-only file system" in escape and not outside.exists()
    assert "tether's sandbox" in escape  # the model is told what to ask for
    assert "SECRET KEY" not in secret and "No such file" in secret
    assert "tether's sandbox" in secret  # a home file missing: the sandbox is named
    assert "Read-only file system" in hook and not (ws / ".git/hooks/pre-commit").exists()
    assert all("Runs in the sandbox; no network" in d for d in editor.dialogs)
    stats = (await editor.history(result["session"]))["stats"]
    assert (stats["commands_sandboxed"], stats["commands_unsandboxed"]) == (4, 0)


async def test_the_network_is_there_only_when_the_person_allowed_a_call_that_asked(
    start_editor: StartEditor, stub: ProviderStub, home: Path, real_dir: Path
) -> None:
    editor = await start(start_editor, stub, home, real_dir)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        script = (
            f"import socket; socket.create_connection(('127.0.0.1', {port}), 3); print('connected')"
        )
        connect = f'{sys.executable} -c "{script}"'
        stub.script(
            tool_calls(
                ("command", {"command": connect}),
                ("command", {"command": connect, "network": True}),
            ),
            text("done"),
        )
        editor.answers = ["Allow", "Allow"]

        await editor.run("connect")

    without, granted = answers(stub)
    assert "connected" not in without and '"network": true' in without
    assert granted.startswith("exit code: 0\nconnected")
    assert "NEEDS NETWORK" in editor.dialogs[1] and "NEEDS NETWORK" not in editor.dialogs[0]
    assert editor.dialog_actions[1] == ["Allow", "Deny"]  # no rule covers a wider call


async def test_a_cancel_and_a_timeout_still_stop_everything_in_the_sandbox(
    start_editor: StartEditor, stub: ProviderStub, home: Path, real_dir: Path
) -> None:
    editor = await start(start_editor, stub, home, real_dir)
    ticking = "(while true; do echo tick >> {}; sleep 0.05; done) & sleep 30"
    stub.script(
        tool_calls(("command", {"command": ticking.format("timed.txt"), "timeout_s": 1})),
        tool_calls(("command", {"command": ticking.format("cancelled.txt")})),
        hang(30),
    )
    editor.answers = ["Allow", "Allow"]
    running = asyncio.create_task(editor.run("tick"))
    await editor.wait_for_update(lambda u: u["kind"] == "tool_result")
    await editor.wait_for_update(
        lambda u: u["kind"] == "tool_call" and "cancelled.txt" in str(u["arguments"])
    )
    await asyncio.sleep(0.5)
    session = editor.updates[0]["session"]
    await editor.command("tether.cancel", {"session": session})
    assert (await running)["status"] == "cancelled"

    ws = editor.workspace
    sizes = [(ws / name).stat().st_size for name in ("timed.txt", "cancelled.txt")]
    await asyncio.sleep(0.5)  # a survivor would have ticked ten times by now
    assert [(ws / name).stat().st_size for name in ("timed.txt", "cancelled.txt")] == sizes
    assert all(size > 0 for size in sizes)
    assert "timed out after 1 s" in answers(stub)[0]


async def test_with_approval_commands_sandboxed_a_plain_command_runs_unasked(
    start_editor: StartEditor, stub: ProviderStub, home: Path, real_dir: Path
) -> None:
    editor = await start(start_editor, stub, home, real_dir, approval={"commands": "sandboxed"})
    stub.script(
        tool_calls(
            ("command", {"command": "echo quietly"}),
            ("command", {"command": "echo loudly", "writable": [str(real_dir)]}),
        ),
        text("done"),
    )
    editor.answers = ["Deny"]

    await editor.run("go")

    quiet, loud = answers(stub)
    assert quiet == "exit code: 0\nquietly"
    assert loud.startswith("denied")
    (dialog,) = editor.dialogs  # only the call that asked for more
    assert f"WRITES OUTSIDE THE WORKSPACE: {real_dir}" in dialog


def fake_bwrap(directory: Path, stderr: str) -> str:
    """A PATH whose bwrap fails as it does under Ubuntu's AppArmor restriction."""
    directory.mkdir()
    script = directory / "bwrap"
    script.write_text(f"#!/bin/sh\necho '{stderr}' >&2\nexit 1\n")
    script.chmod(0o755)
    return f"{directory}:/usr/bin:/bin"


APPARMOR = "bwrap: setting up uid map: Permission denied"


async def test_without_a_working_sandbox_auto_asks_and_says_why(
    start_editor: StartEditor, stub: ProviderStub, home: Path, tmp_path: Path
) -> None:
    env = server_env(stub, home, PATH=fake_bwrap(tmp_path / "bin", APPARMOR))
    editor = await start_editor(
        env=env, options={"tether": {"approval": {"commands": "sandboxed"}}}
    )
    stub.script(tool_calls(("command", {"command": "echo unsandboxed"})), text("done"))
    editor.answers = ["Allow"]

    result = await editor.run("go")

    stats = (await editor.history(result["session"]))["stats"]
    assert (stats["commands_sandboxed"], stats["commands_unsandboxed"]) == (0, 1)
    (dialog,) = editor.dialogs  # sandboxed approval cannot apply: it asks
    assert (
        "Runs WITHOUT the sandbox, with your full rights: user namespaces are restricted" in dialog
    )
    assert APPARMOR in dialog
    assert answers(stub) == ["exit code: 0\nunsandboxed"]


async def test_without_a_working_sandbox_required_refuses_commands_with_the_cause(
    start_editor: StartEditor, stub: ProviderStub, home: Path, tmp_path: Path
) -> None:
    env = server_env(stub, home, PATH=fake_bwrap(tmp_path / "bin", APPARMOR))
    editor = await start_editor(env=env, options={"tether": {"sandbox": {"mode": "required"}}})
    stub.script(tool_calls(("command", {"command": "echo never"})), text("done"))
    editor.answers = ["Allow"]

    await editor.run("go")

    (answer,) = answers(stub)
    assert answer.startswith("not run: the sandbox is required (sandbox.mode = required)")
    assert "user namespaces are restricted" in answer
