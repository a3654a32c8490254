"""What the terminal settles before it speaks LSP: its settings and its workspace."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tether.terminal.launch import BadOptions, ask_options, workspace_root


def test_from_a_subfolder_the_workspace_is_the_git_root(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    deep = tmp_path / "repo" / "src" / "pkg"
    deep.mkdir(parents=True)

    assert workspace_root(None, deep) == (tmp_path / "repo").resolve()
    assert workspace_root(None, tmp_path / "repo") == (tmp_path / "repo").resolve()


def test_a_worktree_or_submodule_has_a_git_file(tmp_path: Path) -> None:
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    inner = tmp_path / "outer" / "vendored"
    inner.mkdir()
    (inner / ".git").write_text("gitdir: ../.git/modules/vendored\n")

    assert workspace_root(None, inner / ".") == inner.resolve()


def test_outside_git_the_workspace_is_the_current_folder(tmp_path: Path) -> None:
    assert workspace_root(None, tmp_path) == tmp_path.resolve()


def test_workspace_given_wins_over_the_git_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)

    assert workspace_root(Path("sub"), tmp_path / "sub") == (tmp_path / "sub").resolve()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),
        ("", None),
        ("null", None),
        ('{"turn": {"tool_budget": 3}}', {"turn": {"tool_budget": 3}}),
    ],
)
def test_ask_options_are_a_json_object(value: str | None, expected: object) -> None:
    env = {} if value is None else {"TETHER_ASK_OPTIONS": value}
    assert ask_options(env) == expected


@pytest.mark.parametrize(("value", "said"), [("[1, 2]", "got list"), ("{oops", "Expecting")])
def test_other_ask_options_are_refused_saying_why(value: str, said: str) -> None:
    with pytest.raises(BadOptions, match=f"TETHER_ASK_OPTIONS must be a JSON object: .*{said}"):
        ask_options({"TETHER_ASK_OPTIONS": value})


def test_the_server_starts_before_the_client_imports_pygls(tmp_path: Path) -> None:
    """Most of a short command's time is the two processes importing pygls and
    lsprotocol: the server must be on its way before the client's imports begin."""
    probe = """
import sys
from tether import cli
from tether.terminal import launch

def start_server(env):
    print(sorted(m for m in ("pygls", "lsprotocol", "pydantic") if m in sys.modules))
    raise OSError("not in this test")

launch.start_server = start_server
sys.exit(cli.main(["ask", "--workspace", ".", "hi"]))
"""
    ran = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )

    assert ran.returncode == 1 and "could not start the server: not in this test" in ran.stderr
    assert ran.stdout.strip() == "[]"
