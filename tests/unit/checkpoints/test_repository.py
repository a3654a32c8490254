"""Snapshots in the workspace's own repository: nothing of the person's changes, only
changed files' blobs are added, large files are skipped, a hostile config runs nothing."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from tests.e2e.test_checkpoints import git_state
from tests.support.repositories import git_repository, hostile_repository
from tether.checkpoints.repository import Repository


def objects(root: Path) -> set[str]:
    store = root / ".git" / "objects"
    return {f"{d.name}{f.name}" for d in store.iterdir() if len(d.name) == 2 for f in d.iterdir()}


async def test_a_snapshot_changes_nothing_the_person_owns(workspace: Path) -> None:
    git_repository(workspace)
    (workspace / "a.txt").write_text("changed, not staged\n")
    (workspace / "new.txt").write_text("untracked\n")
    subprocess.run(["git", "stash", "list"], cwd=workspace, check=True)
    before = git_state(workspace)
    repository = await Repository.find(workspace)
    assert repository is not None

    snapshot = repository.snapshot(10 * 2**20)
    repository.keep("refs/tether/checkpoints/s/1", snapshot.tree, None, "test")

    assert git_state(workspace) == before
    listed = repository.git("ls-tree", "-r", "--name-only", snapshot.tree).decode().split()
    assert sorted(listed) == ["a.txt", "new.txt"]


async def test_only_the_changed_files_blobs_are_added(workspace: Path) -> None:
    git_repository(workspace)
    for n in range(50):
        (workspace / f"f{n}.txt").write_text(f"{n}\n")
    subprocess.run(["git", "add", "."], cwd=workspace, check=True)
    repository = await Repository.find(workspace)
    assert repository is not None
    repository.snapshot(2**20)
    (workspace / "f1.txt").write_text("changed\n")
    (workspace / "f2.txt").write_text("changed too\n")
    had = objects(workspace)

    repository.snapshot(2**20)

    added = objects(workspace) - had
    kinds = [repository.git("cat-file", "-t", o).decode().strip() for o in added]
    assert kinds.count("blob") == 2 and set(kinds) == {"blob", "tree"}


async def test_a_file_over_the_limit_is_skipped_and_named(workspace: Path) -> None:
    git_repository(workspace)
    (workspace / "big.bin").write_bytes(b"x" * 5000)
    (workspace / "small.txt").write_text("s\n")
    repository = await Repository.find(workspace)
    assert repository is not None

    snapshot = repository.snapshot(1000)

    assert snapshot.skipped == ["big.bin"]
    listed = repository.git("ls-tree", "-r", "--name-only", snapshot.tree).decode().split()
    assert "big.bin" not in listed and "small.txt" in listed


async def test_a_hostile_repositorys_filter_and_fsmonitor_do_not_run(workspace: Path) -> None:
    hostile_repository(workspace)
    repository = await Repository.find(workspace)
    assert repository is not None

    repository.snapshot(2**20)

    assert list(workspace.glob("PWNED_*")) == []
    # The same `git add` without the overrides runs them: the check above can fail.
    with tempfile.TemporaryDirectory() as temp:
        env = {**os.environ, "GIT_INDEX_FILE": f"{temp}/index"}
        subprocess.run(["git", "add", "-A"], cwd=workspace, env=env, capture_output=True)
    assert list(workspace.glob("PWNED_*")) != []


async def test_outside_git_there_is_no_repository(workspace: Path) -> None:
    assert await Repository.find(workspace) is None
