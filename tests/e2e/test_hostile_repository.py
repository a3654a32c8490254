"""A hostile repository and a model steered by it, end to end over LSP: a read judged
inside the workspace when the reply was planned is judged again when it runs, and a
pattern built to backtrack forever neither hangs the call nor the server."""

from __future__ import annotations

import asyncio
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Editor, StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls

KEY = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"


def git(repo: Path, *args: str) -> None:
    config = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]
    config += ["-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main"]
    subprocess.run(["git", *config, *args], cwd=repo, check=True, capture_output=True)


def repository_with_an_evil_branch(repo: Path, outside: Path) -> None:
    """``main`` has a directory ``docs``; branch ``evil`` makes ``docs`` a symbolic link to
    ``outside``, a directory beyond the workspace that holds a private key."""
    outside.mkdir()
    (outside / "id_rsa").write_text(KEY)
    git(repo, "init", "-q")
    (repo / "docs").mkdir()
    (repo / "docs/readme.md").write_text("the docs\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs")
    git(repo, "checkout", "-q", "-b", "evil")
    git(repo, "rm", "-q", "-r", "docs")
    (repo / "docs").symlink_to(outside)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "docs elsewhere")
    git(repo, "checkout", "-q", "main")
    assert (repo / "docs").is_dir() and not (repo / "docs").is_symlink()


async def tool_messages(editor: Editor, session: str) -> list[dict[str, Any]]:
    return [m for m in (await editor.history(session))["messages"] if m["role"] == "tool"]


def sent(stub: ProviderStub, request: int) -> list[dict[str, Any]]:
    return [m for m in stub.requests[request]["messages"] if m["role"] == "tool"]


async def test_a_read_after_a_command_that_moved_a_symlink_out_is_not_run_unasked(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    # The sandbox keeps .git/ read-only by default; this checkout must write it.
    editor = await start_editor(options={"tether": {"sandbox": {"git_writable": True}}})
    repository_with_an_evil_branch(editor.workspace, tmp_path / "outside")
    read = ("fs-read", {"path": "docs/id_rsa"})
    stub.script(
        tool_calls(("command", {"command": "git checkout -q evil"}), read),
        tool_calls(read),  # the model does as told: calls it again
        text("done"),
    )
    editor.answers = ["Allow", "Deny"]  # the command; then the read, now asked about

    result = await editor.run("switch branches and read the docs")

    assert result["status"] == "done"
    assert (editor.workspace / "docs").is_symlink()  # the command did run
    command, first_read = sent(stub, 1)
    assert "exit code: 0" in command["content"]
    assert "PRIVATE KEY" not in first_read["content"]
    assert first_read["content"] == (
        "docs/id_rsa now resolves outside the workspace; call it again and the person will be asked"
    )
    assert len(editor.dialogs) == 2 and "git checkout -q evil" in editor.dialogs[0]
    assert "id_rsa" in editor.dialogs[1] and "outside the workspace" in editor.dialogs[1]
    second_read = sent(stub, 2)[-1]
    assert second_read["content"].startswith("denied")
    answers = await tool_messages(editor, result["session"])
    assert [m["status"] for m in answers] == ["ok", "error", "denied"]
    assert all("PRIVATE KEY" not in m["content"] for m in answers)


CATASTROPHIC_REGEX = "(a+)+$"
CATASTROPHIC_GLOB = "a*a*a*a*a*a*a*a*a*a*a*b"


async def test_catastrophic_patterns_neither_hang_the_calls_nor_the_server(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    """A backtracking engine takes seconds per line of 27 a's, and tens of seconds for this
    glob on a name of 44 a's, holding the interpreter all along: no other request would be
    answered, not even the cancel. Both must return at once and leave the server free."""
    editor = await start_editor()
    (editor.workspace / ("a" * 44)).touch()
    (editor.workspace / "long.txt").write_text("a" * 100_000 + "!\n")
    editor.open("open.txt", ("a" * 27 + "!\n") * 3 + "a" * 100_000 + "!\n")
    stub.script(
        tool_calls(
            ("index-grep", {"pattern": CATASTROPHIC_REGEX}),
            ("fs-find", {"pattern": CATASTROPHIC_GLOB}),
        ),
        text("done"),
    )

    start = time.monotonic()
    run = asyncio.create_task(editor.run("search"))
    await editor.wait_for_update(lambda u: u["kind"] == "tool_call")
    async with asyncio.timeout(5):  # the server answers another request meanwhile
        asked = time.monotonic()
        await editor.command("tether.sessions", {})
        answered_in = time.monotonic() - asked
    async with asyncio.timeout(10):
        result = await run
    took = time.monotonic() - start

    assert result["status"] == "done"
    grep, find = sent(stub, 1)
    assert grep["content"] == f"no matches for {CATASTROPHIC_REGEX!r} in ."
    assert find["content"] == f"no paths match {CATASTROPHIC_GLOB!r} under ."
    assert answered_in < 2 and took < 10, (answered_in, took)
