"""The dispatcher's rules, end to end: concurrency, order, budget, guard, independence."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Editor, StartEditor, server_env
from tests.support.provider_stub import ProviderStub, hang, text, tool_calls


def slow_git_status(
    stub: ProviderStub, home: Path, workspace: Path, tmp_path: Path
) -> dict[str, str]:
    """The server's environment, with a `git` whose `status` takes half a second longer
    (a big repository on a slow disk), and a real repository in the workspace. (A slow
    fsmonitor hook no longer serves: a read never runs the repository's programs.)"""
    real = shutil.which("git")
    assert real is not None
    slow = tmp_path / "slow-bin"
    slow.mkdir()
    wrapper = slow / "git"
    wrapper.write_text(
        '#!/bin/sh\nfor a in "$@"; do [ "$a" = status ] && sleep 0.5 && break; done\n'
        f'exec {real} "$@"\n'
    )
    wrapper.chmod(0o755)
    subprocess.run(["git", "init", "-q"], cwd=workspace, check=True)
    return server_env(stub, home, PATH=f"{slow}{os.pathsep}{os.environ['PATH']}")


def tool_answers(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in request["messages"] if m["role"] == "tool"]


async def tool_messages(editor: Editor, session: str) -> list[dict[str, Any]]:
    return [m for m in (await editor.history(session))["messages"] if m["role"] == "tool"]


def span(message: dict[str, Any]) -> tuple[datetime, datetime]:
    return datetime.fromisoformat(message["started_at"]), datetime.fromisoformat(
        message["ended_at"]
    )


async def test_reads_run_together_and_are_recorded_in_call_order(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path, home: Path, tmp_path: Path
) -> None:
    editor = await start_editor(env=slow_git_status(stub, home, workspace, tmp_path))
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(
        tool_calls(("git-status", {}), ("fs-read", {"path": "a.txt"}), ("fs-list", {})),
        text("ok"),
    )

    result = await editor.run("look around")

    finished = [u["tool"] for u in editor.updates if u["kind"] == "tool_result"]
    assert finished[-1] == "git-status"  # the slow one finished last...
    sent = [a["tool_call_id"] for a in tool_answers(stub.requests[1])]
    calls = next(m for m in stub.requests[1]["messages"] if m.get("tool_calls"))["tool_calls"]
    assert sent == [c["id"] for c in calls]  # ...but is answered first, in call order
    slow, fast, listing = await tool_messages(editor, result["session"])
    assert [m["tool"] for m in (slow, fast, listing)] == ["git-status", "fs-read", "fs-list"]
    assert span(fast)[0] < span(slow)[1] and span(slow)[0] < span(fast)[1]  # spans overlap
    stats = (await editor.history(result["session"]))["stats"]
    assert stats["tool_calls"] == 3 and stats["tool_time_s"] < stats["tool_time_sum_s"]


async def test_the_same_call_twice_runs_in_order(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path, home: Path, tmp_path: Path
) -> None:
    editor = await start_editor(env=slow_git_status(stub, home, workspace, tmp_path))
    stub.script(tool_calls(("git-status", {}), ("git-status", {})), text("ok"))

    result = await editor.run("status twice")

    first, second = await tool_messages(editor, result["session"])
    assert span(first)[1] <= span(second)[0]


async def test_a_failing_read_stops_none_of_its_siblings(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(
        tool_calls(("fs-read", {"path": "missing.txt"}), ("fs-read", {"path": "a.txt"})),
        text("ok"),
    )
    result = await editor.run("read")
    statuses = [m["status"] for m in await tool_messages(editor, result["session"])]
    assert statuses == ["error", "ok"]


async def test_the_fourth_identical_call_stops_the_turn(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    same = ("fs-read", {"path": "a.txt"})
    stub.script(
        tool_calls(same), tool_calls(same), tool_calls(same), tool_calls(same, ("fs-list", {}))
    )

    result = await editor.run("loop")

    assert result["status"] == "stopped" and "repeat" in result["error"]
    statuses = [m["status"] for m in await tool_messages(editor, result["session"])]
    assert statuses == ["ok", "ok", "ok", "not_executed", "not_executed"]
    assert len(stub.requests) == 4


async def test_calls_past_the_budget_are_not_executed_and_the_person_is_asked_once(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"turn": {"tool_budget": 2}}})
    editor.answers = ["Stop"]
    asked = editor.dialogs

    (editor.workspace / "a.txt").write_text("alpha\n")
    reads = [("fs-read", {"path": "a.txt", "limit": n}) for n in (1, 2, 3, 4)]
    stub.script(tool_calls(*reads))

    result = await editor.run("read a lot")

    assert len(asked) == 1 and "budget of 2" in asked[0]
    assert result["status"] == "stopped" and "budget" in result["error"]
    answers = await tool_messages(editor, result["session"])
    assert [m["status"] for m in answers] == ["ok", "ok", "not_executed", "not_executed"]
    never_started = answers[2]
    assert never_started["started_at"] is None and never_started["ended_at"] is None


async def test_extending_the_budget_lets_every_call_run(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor(options={"tether": {"turn": {"tool_budget": 2}}})
    editor.answers = ["Extend"]

    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(
        tool_calls(*[("fs-read", {"path": "a.txt", "limit": n}) for n in (1, 2, 3)]), text("ok")
    )

    result = await editor.run("read a lot")

    assert result["status"] == "done"
    statuses = [m["status"] for m in await tool_messages(editor, result["session"])]
    assert statuses == ["ok", "ok", "ok"]


async def test_cancelling_answers_every_call(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path, home: Path, tmp_path: Path
) -> None:
    editor = await start_editor(env=slow_git_status(stub, home, workspace, tmp_path))
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(tool_calls(("fs-read", {"path": "a.txt"}), ("git-status", {})), hang(30))
    task = asyncio.create_task(editor.run("go"))
    await editor.wait_for_update(lambda u: u["kind"] == "tool_result" and u["tool"] == "fs-read")
    session = editor.updates[0]["session"]

    await editor.command("tether.cancel", {"session": session})
    assert (await task)["status"] == "cancelled"

    statuses = [m["status"] for m in await tool_messages(editor, session)]
    assert statuses == ["ok", "interrupted"]


async def test_a_read_outside_the_workspace_is_not_run_silently(
    start_editor: StartEditor, stub: ProviderStub, tmp_path: Path
) -> None:
    editor = await start_editor()
    (tmp_path / "secret.txt").write_text("do not leak\n")
    (editor.workspace / "link.txt").symlink_to(tmp_path / "secret.txt")
    stub.script(
        tool_calls(
            ("fs-read", {"path": "link.txt"}), ("fs-read", {"path": str(tmp_path / "secret.txt")})
        ),
        text("ok"),
    )

    editor.answers = ["Deny", "Deny"]

    result = await editor.run("read the link")

    assert len(editor.dialogs) == 2 and "outside the workspace" in editor.dialogs[0]
    answers = await tool_messages(editor, result["session"])
    assert [m["status"] for m in answers] == ["denied", "denied"]
    assert all("do not leak" not in m["content"] for m in answers)
