"""A repository's own git config names programs; tether's git overrides each of them."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from tests.support.repositories import hostile_repository
from tether.tools.environment import child_environment
from tether.tools.git_config import as_arguments, as_environment, neutralised, repository_overrides


def test_only_the_repositorys_own_scopes_are_overridden() -> None:
    listing = "\0".join(
        [
            "global", "filter.lfs.clean\ngit-lfs clean -- %f",
            "local", "filter.evil.clean\ntouch x",
            "local", "diff.evil.textconv\ntouch y",
            "local", "user.name\nsomeone",
            "worktree", "core.fsmonitor\ntouch z",
        ]
    ) + "\0"  # fmt: skip
    overrides = dict(neutralised(listing))
    assert overrides["filter.evil.clean"] == "" and overrides["diff.evil.textconv"] == "cat"
    assert overrides["core.fsmonitor"] == "false"
    assert "filter.lfs.clean" not in overrides  # the person's own git lfs keeps working
    assert "user.name" not in overrides


@pytest.mark.parametrize(
    "command",
    [
        ["status", "--short"],
        ["diff"],
        ["log", "-p", "-1"],
        ["show", "HEAD"],
    ],
)
def test_git_with_the_overrides_runs_no_program_of_the_repository(
    tmp_path: Path, command: list[str]
) -> None:
    root = hostile_repository(tmp_path)
    overrides = asyncio.run(repository_overrides(root))
    subprocess.run(["git", *as_arguments(overrides), *command], cwd=root, capture_output=True)
    env = {**child_environment(()), **as_environment(overrides)}
    subprocess.run(["git", *command], cwd=root, env=env, capture_output=True)
    assert sorted(p.name for p in root.glob("PWNED*")) == []


def test_without_them_the_repository_runs_its_programs(tmp_path: Path) -> None:
    """The fixture is hostile indeed: plain git runs its programs."""
    root = hostile_repository(tmp_path)
    subprocess.run(["git", "diff"], cwd=root, capture_output=True)
    assert {p.name for p in root.glob("PWNED*")} >= {"PWNED_clean", "PWNED_textconv"}


def test_children_never_get_tethers_variables_or_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TETHER_API_KEY", "sk-secret-value-1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value-2")
    monkeypatch.setenv("SOMETHING_ELSE", "sk-secret-value-3")
    env = child_environment(("sk-secret-value-3",))
    assert not {"TETHER_API_KEY", "OPENAI_API_KEY", "SOMETHING_ELSE"} & set(env)
