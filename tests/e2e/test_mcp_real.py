"""Real MCP servers from the package index, over stdio: ``mcp-server-git`` and
``mcp-server-time`` (pinned in the test extra). Each runs behind a relay
(``tests/support/mcp_relay.py``) that logs when each call reaches the server and holds
each answer a moment, so that two calls in flight at once show in its log."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import StartEditor
from tests.e2e.test_mcp import ROOT, answers, until_offered
from tests.support.provider_stub import ProviderStub, text, tool_calls

HOLD_S = 0.4


def relayed(log: Path, *command: str, **extra: Any) -> dict[str, Any]:
    relay = ["-m", "tests.support.mcp_relay", str(log), str(HOLD_S), "--", *command]
    return {"command": sys.executable, "args": relay, "cwd": str(ROOT), **extra}


@pytest.fixture
def repository(workspace: Path) -> Path:
    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(workspace), *args], check=True, capture_output=True)

    git("init", "-q", "-b", "trunk")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "T")
    (workspace / "a.txt").write_text("a\n")
    git("add", "a.txt")
    git("commit", "-q", "-m", "the first commit")
    return workspace


def servers(tmp_path: Path, repository: Path, trusted: bool) -> dict[str, Any]:
    git = (sys.executable, "-m", "mcp_server_git", "--repository", str(repository))
    time = (sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC")
    return {
        "git": relayed(tmp_path / "git.log", *git, trusted=trusted),
        "time": relayed(tmp_path / "time.log", *time, trusted=trusted),
    }


def calls(repository: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("mcp__git__git_log", {"repo_path": str(repository), "max_count": 1}),
        ("mcp__git__git_branch", {"repo_path": str(repository), "branch_type": "local"}),
        ("mcp__time__get_current_time", {"timezone": "UTC"}),
        ("mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}),
    ]


def check_results(sent: list[dict[str, Any]]) -> None:
    """Each result is its own call's, in call order."""
    log, branches, utc, tokyo = (m["content"] for m in sent)
    assert "the first commit" in log
    assert "trunk" in branches and "the first commit" not in branches
    assert '"timezone": "UTC"' in utc and "Asia/Tokyo" in tokyo


def overlapped(log: Path) -> bool:
    """Whether the server's second call reached it before the answer to its first."""
    events = [line.split()[0] for line in log.read_text().splitlines()]
    return events[:2] == ["call", "call"]


async def test_a_trusted_real_servers_reads_overlap_and_answer_in_call_order(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path, repository: Path
) -> None:
    options = {"tether": {"mcp": {"servers": servers(tmp_path, repository, trusted=True)}}}
    editor = await start_editor(options=options)
    await until_offered(editor, stub, {"mcp__git__git_log", "mcp__time__get_current_time"})
    stub.script(tool_calls(*calls(repository)), text("seen"))

    result = await editor.run("what is here, and what time is it?")

    assert result["status"] == "done" and editor.dialogs == []
    check_results(answers(stub.requests[-1]))
    assert overlapped(tmp_path / "git.log") and overlapped(tmp_path / "time.log")


async def test_an_untrusted_real_servers_same_reads_ask_first(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path, repository: Path
) -> None:
    options = {"tether": {"mcp": {"servers": servers(tmp_path, repository, trusted=False)}}}
    editor = await start_editor(options=options)
    await until_offered(editor, stub, {"mcp__git__git_log", "mcp__time__get_current_time"})
    editor.answers = ["Allow"] * 4
    stub.script(tool_calls(*calls(repository)), text("seen"))

    result = await editor.run("what is here, and what time is it?")

    assert result["status"] == "done"
    assert len(editor.dialogs) == 4
    assert re.search(r"MCP server 'git', tool 'git_log'", editor.dialogs[0])
    check_results(answers(stub.requests[-1]))
    # Asked one by one, each call ran alone.
    assert not overlapped(tmp_path / "git.log") and not overlapped(tmp_path / "time.log")
