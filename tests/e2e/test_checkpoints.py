"""Checkpoints and rewind end to end: a turn's patch and command are taken back, the
person's edits since stay, and nothing the person owns in git changes."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Editor, StartEditor, close, server_env
from tests.e2e.test_cli import tether
from tests.support.provider_stub import ProviderStub, text, tool_calls
from tests.support.repositories import git_repository, hostile_repository

TOP = "def top():\n    return 1\n"
MIDDLE = "".join(f"# line {n}\n" for n in range(12))
BOTTOM = "def bottom():\n    return 2\n"
A_PY = TOP + MIDDLE + BOTTOM
COMMAND = "printf 'b changed\\n' > b.txt && echo new > c.txt && rm d.txt"


def git_state(root: Path) -> dict[str, Any]:
    """What the person owns in git: status, index, HEAD, branches, stash; read without
    taking a lock (so the reading itself changes nothing)."""

    def git(*args: str) -> str:
        env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
        done = subprocess.run(["git", *args], cwd=root, capture_output=True, env=env, check=False)
        return done.stdout.decode()

    index = root / ".git" / "index"
    return {
        "status": git("status", "--porcelain=v2", "--untracked-files=all"),
        "index": hashlib.sha256(index.read_bytes()).hexdigest() if index.exists() else None,
        "staged": git("ls-files", "-s"),
        "head": git("rev-parse", "HEAD") + git("symbolic-ref", "-q", "HEAD"),
        "branches": git("for-each-ref", "refs/heads", "refs/tags", "refs/stash"),
        "stash": git("stash", "list"),
    }


def workspace_files(root: Path) -> None:
    (root / "a.py").write_text(A_PY)
    (root / "b.txt").write_text("b\n")
    (root / "d.txt").write_text("d\n")


def commit_all(root: Path) -> None:
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(
        ["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "files"],
        cwd=root,
        check=True,
    )


def the_turn(stub: ProviderStub, *more: Any) -> None:
    """A turn that patches a.py's top and runs a command on b, c and d."""
    patch = {"path": "a.py", "edits": [{"old": "return 1", "new": "return 100"}]}
    stub.script(tool_calls(("patch", patch), ("command", {"command": COMMAND})), *more)


async def run_the_turn(editor: Editor, stub: ProviderStub) -> str:
    the_turn(stub, text("done"))
    editor.answers = ["Allow", "Allow"]
    result = await editor.run("change things")
    assert result["status"] == "done", result
    return str(result["session"])


async def rewind(editor: Editor, **argument: Any) -> dict[str, Any]:
    return dict(await editor.command("tether.rewind", argument))


async def test_rewind_takes_back_the_turn_and_keeps_the_persons_edits(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    git_repository(workspace)
    workspace_files(workspace)
    commit_all(workspace)
    (workspace / "notes.txt").write_text("the person's untracked file\n")
    before = git_state(workspace)
    editor = await start_editor()

    session = await run_the_turn(editor, stub)

    assert (workspace / "a.py").read_text() == A_PY.replace("return 1", "return 100")
    assert not (workspace / "d.txt").exists() and (workspace / "c.txt").exists()
    assert git_state(workspace)["index"] == before["index"]  # the checkpoints wrote none
    assert git_state(workspace)["head"] == before["head"]
    assert git_state(workspace)["stash"] == before["stash"]
    history = await editor.history(session)
    (checkpoint,) = history["checkpoints"]
    assert checkpoint["turn"] == 1
    assert sorted(checkpoint["files"]) == ["a.py", "b.txt", "c.txt", "d.txt"]
    assert {m.get("turn") for m in history["messages"]} == {1}

    # The person edits another hunk of a.py and saves.
    edited = (workspace / "a.py").read_text().replace("return 2", "return 2  # mine")
    (workspace / "a.py").write_text(edited)
    result = await rewind(editor, session=session)

    assert sorted(result["restored"]) == ["a.py", "b.txt", "d.txt"]
    assert result["removed"] == ["c.txt"] and result["conflicts"] == []
    assert (workspace / "a.py").read_text() == A_PY.replace("return 2", "return 2  # mine")
    assert (workspace / "b.txt").read_text() == "b\n"
    assert (workspace / "d.txt").read_text() == "d\n"
    assert not (workspace / "c.txt").exists()
    assert (workspace / "notes.txt").exists()
    after = git_state(workspace)
    # a.py keeps the person's edit, so only its line in `status` may differ from before.
    assert {k: v for k, v in after.items() if k != "status"} == {
        k: v for k, v in before.items() if k != "status"
    }
    assert [line for line in after["status"].splitlines() if "a.py" not in line] == [
        line for line in before["status"].splitlines()
    ]
    shown = await editor.history(session)
    (entry,) = shown["rewinds"]
    assert entry["turn"] == 1 and entry["what"] == "files" and entry["removed"] == ["c.txt"]
    assert any(u["kind"] == "rewind" for u in editor.updates)


async def test_an_overlapping_edit_is_a_conflict_and_changes_nothing(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    git_repository(workspace)
    workspace_files(workspace)
    commit_all(workspace)
    editor = await start_editor()
    session = await run_the_turn(editor, stub)
    mine = (workspace / "a.py").read_text().replace("return 100", "return 100 + 1")
    (workspace / "a.py").write_text(mine)
    before = git_state(workspace)

    result = await rewind(editor, session=session, turn=1)

    (conflict,) = result["conflicts"]
    assert conflict["path"] == "a.py" and "overlap" in conflict["reason"]
    assert (workspace / "a.py").read_text() == mine
    assert "a.py" not in result["restored"]
    assert (workspace / "b.txt").read_text() == "b\n"  # the other files are still taken back
    assert git_state(workspace)["index"] == before["index"]


async def test_outside_git_patches_are_rewound_and_commands_are_said_to_stay(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    workspace_files(workspace)
    editor = await start_editor()
    session = await run_the_turn(editor, stub)

    result = await rewind(editor, session=session, what="both")

    assert result["restored"] == ["a.py"] and result["removed"] == []
    assert (workspace / "a.py").read_text() == A_PY
    assert (workspace / "c.txt").exists()  # a command's effects stay outside git
    assert any("cannot be taken back" in note for note in result["notes"])


async def test_a_patch_to_a_file_git_ignores_is_rewound(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    # The snapshot of the work tree leaves ignored files out: the patch's own images take
    # them back (found by the VS Code e2e, whose workspace a repository above it ignored).
    git_repository(workspace)
    (workspace / ".gitignore").write_text("gen/\n")
    (workspace / "gen").mkdir()
    (workspace / "gen" / "out.txt").write_text("made = 1\n")
    editor = await start_editor()
    patch = {"path": "gen/out.txt", "edits": [{"old": "made = 1", "new": "made = 2"}]}
    stub.script(tool_calls(("patch", patch)), text("done"))
    editor.answers = ["Allow"]
    session = (await editor.run("change the generated file"))["session"]
    assert (workspace / "gen" / "out.txt").read_text() == "made = 2\n"
    (checkpoint,) = (await editor.history(session))["checkpoints"]
    assert checkpoint["files"] == ["gen/out.txt"]

    result = await rewind(editor, session=session)

    assert result["restored"] == ["gen/out.txt"] and result["conflicts"] == []
    assert (workspace / "gen" / "out.txt").read_text() == "made = 1\n"


async def test_a_workspace_a_repository_above_it_ignores_is_rewound(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    above = workspace.parent
    git_repository(above)
    (above / ".gitignore").write_text(f"{workspace.name}/\ntether-home/\n")
    workspace_files(workspace)
    editor = await start_editor()
    session = await run_the_turn(editor, stub)

    result = await rewind(editor, session=session)

    assert result["restored"] == ["a.py"] and result["conflicts"] == []
    assert (workspace / "a.py").read_text() == A_PY


async def test_a_conversation_rewind_hides_the_turn_from_the_model(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    git_repository(workspace)
    workspace_files(workspace)
    commit_all(workspace)
    editor = await start_editor()
    session = await run_the_turn(editor, stub)

    result = await rewind(editor, session=session, what="conversation")
    assert result["restored"] == [] and (workspace / "c.txt").exists()
    stub.script(text("fresh start"))
    await editor.run("second prompt", session)

    sent = stub.requests[-1]["messages"]
    said = [m.get("content") for m in sent if m["role"] == "user"]
    assert said == ["second prompt"]
    history = await editor.history(session)
    assert [m["content"] for m in history["messages"] if m["role"] == "user"] == [
        "change things",
        "second prompt",
    ]
    assert history["messages"][-1]["turn"] == 2


async def test_a_hostile_repositorys_programs_never_run_for_a_checkpoint(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    hostile_repository(workspace)
    workspace_files(workspace)
    (workspace / "b.txt").write_text("b\n")  # filtered by the repository's `evil` clean
    editor = await start_editor()

    session = await run_the_turn(editor, stub)
    result = await rewind(editor, session=session)

    assert "b.txt" in result["restored"]
    assert sorted(p.name for p in workspace.glob("PWNED_*")) == []


async def test_kill_9_during_a_rewind_leaves_each_file_before_or_after(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path
) -> None:
    git_repository(workspace)
    names = [f"f{n:03}.txt" for n in range(300)]
    for name in names:
        (workspace / name).write_text(f"before {name}\n" * 50)
    commit_all(workspace)
    editor = await start_editor()
    stub.script(tool_calls(("command", {"command": "sed -i 's/before/after/' f*.txt"})), text("ok"))
    editor.answers = ["Allow"]
    session = (await editor.run("change them all"))["session"]
    assert (workspace / names[0]).read_text().startswith("after")

    rewinding = asyncio.ensure_future(rewind(editor, session=session))
    while all((workspace / n).read_text().startswith("after") for n in names[:5]):
        await asyncio.sleep(0.001)  # the rewind has begun writing
    editor.kill()
    rewinding.cancel()
    assert editor.client._server is not None
    await asyncio.wait_for(editor.client._server.wait(), 10)  # reaped, as a crash is

    contents = {(workspace / n).read_text() for n in names}
    allowed = {f"{w} {n}\n" * 50 for n in names for w in ("before", "after")}
    assert contents <= allowed
    assert any(c.startswith("after") for c in contents), "the kill came after the rewind"


async def test_the_terminal_rewinds_a_turn(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path, home: Path
) -> None:
    git_repository(workspace)
    workspace_files(workspace)
    commit_all(workspace)
    editor = await start_editor()
    session = await run_the_turn(editor, stub)
    await close(editor)

    ran = await tether("rewind", session, "--turn", "1", cwd=workspace, env=server_env(stub, home))

    assert ran.code == 0, ran.err
    assert "removed c.txt" in ran.out and "restored b.txt" in ran.out
    assert (workspace / "a.py").read_text() == A_PY and not (workspace / "c.txt").exists()
    again = await tether("rewind", "nosuch", cwd=workspace, env=server_env(stub, home))
    assert again.code == 1 and "unknown session" in again.err
