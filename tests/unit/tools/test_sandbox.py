"""The sandbox's command line, its probe, and what it says when it cannot be used."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.unit.tools import marked
from tether.config import SandboxSettings
from tether.tools.process_group import NEW_GROUP
from tether.tools.sandbox import Grant, Sandbox, check, diagnose, toolchains

linux_bwrap = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("bwrap") is None,
    reason="bubblewrap on Linux",
)


def test_the_workspace_is_writable_but_its_git_and_the_home_are_not(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    argv = Sandbox(SandboxSettings(), True).argv("make", tmp_path, Grant())
    line = " ".join(argv)
    assert f"--bind {tmp_path} {tmp_path}" in line
    assert f"--ro-bind {tmp_path / '.git'} {tmp_path / '.git'}" in line
    assert f"--tmpfs {Path.home()}" in line and "--tmpfs /tmp" in line
    assert "--unshare-all" in argv and "--share-net" not in argv
    assert "--die-with-parent" in argv and "--new-session" not in argv
    assert argv[-3:] == ["/bin/sh", "-c", "make"]
    # Later mounts win: the workspace after the private /tmp and home, .git after it.
    assert line.index("--tmpfs /tmp") < line.index(f"--bind {tmp_path}") < line.index(".git")


def test_what_the_person_widens_is_mounted_and_a_grant_adds_the_network(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    settings = SandboxSettings(git_writable=True, read_paths=["~/.gitconfig"], write_paths=["/srv"])
    grant = Grant(network=True, writable=(Path("/var/cache/x"),))
    line = " ".join(Sandbox(settings, True).argv("make", tmp_path, grant))
    assert f"--ro-bind-try {Path.home() / '.gitconfig'}" in line
    assert "--bind-try /srv /srv" in line and "--bind-try /var/cache/x /var/cache/x" in line
    assert f"{tmp_path / '.git'}" not in line and "--share-net" in line


def test_toolchains_in_the_home_are_shown_but_not_the_rest_of_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    for entry in (".pyenv/shims", ".cargo/bin", ".local/bin", "bin"):
        (home / entry).mkdir(parents=True)
    path = [home / ".pyenv/shims", home / ".cargo/bin", home / ".local/bin", home / "bin"]
    monkeypatch.setenv("PATH", ":".join([*map(str, path), "/usr/bin"]))
    shown = toolchains(home)
    assert home / ".pyenv" in shown and home / ".cargo" in shown
    assert home / ".local/bin" in shown and home / ".local" not in shown  # keyrings live there
    assert home / "bin" in shown


@pytest.mark.parametrize(
    ("stderr", "said"),
    [
        ("bwrap: setting up uid map: Permission denied", "user namespaces are restricted"),
        (
            "bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted",
            "user namespaces are restricted",
        ),
        ("bwrap: No permissions to create new namespace", "does not allow new namespaces"),
        (
            "bwrap: Creating new namespace failed: Operation not permitted",
            "does not allow new namespaces",
        ),
        ("bwrap: something new", "bubblewrap failed: bwrap: something new"),
    ],
)
def test_each_way_bubblewrap_fails_is_said_plainly(stderr: str, said: str) -> None:
    message = diagnose(stderr)
    assert said in message and stderr in message


def test_off_means_off_and_says_so() -> None:
    sandbox = check(SandboxSettings(mode="off"))
    assert not sandbox.used and sandbox.cause == "the sandbox is off (sandbox.mode = off)"


def test_a_missing_bwrap_is_named_with_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    sandbox = check(SandboxSettings())
    assert not sandbox.used
    assert "bubblewrap is not installed" in sandbox.cause or "no sandbox on" in sandbox.cause


@linux_bwrap
def test_every_process_of_the_sandbox_is_in_the_group_a_kill_reaches(tmp_path: Path) -> None:
    """The cancel campaign once found a sandboxed command alive after its kill: with
    ``--new-session`` the sandbox's pid 1 left the killed group before it armed
    ``--die-with-parent``. Each process in the sandbox must be in the group itself."""
    nap = f"30.{os.getpid()}{time.monotonic_ns() % 10_000}"
    line = f"sleep {nap} & (sleep {nap}; true) & wait"
    argv = Sandbox(SandboxSettings(), True).argv(line, tmp_path, Grant())
    quiet = subprocess.DEVNULL
    sandbox = subprocess.Popen(argv, stdin=quiet, stdout=quiet, stderr=quiet, **NEW_GROUP)
    try:
        # bwrap, the sandbox's pid 1, the shell, its subshell and the two sleeps
        deadline = time.monotonic() + 10
        while len(found := marked(nap)) < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(found) == 6, found
        assert {pid: os.getpgid(pid) for pid in found} == dict.fromkeys(found, sandbox.pid)
    finally:
        os.killpg(sandbox.pid, signal.SIGKILL)
        sandbox.wait()
    deadline = time.monotonic() + 3
    while marked(nap) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert marked(nap) == []


@linux_bwrap
def test_the_probe_passes_where_bubblewrap_works() -> None:
    sandbox = check(SandboxSettings())
    assert sandbox.used, sandbox.cause


@linux_bwrap
def test_the_probe_catches_a_sandbox_that_does_not_hold() -> None:
    sandbox = check(SandboxSettings(network=True))
    assert not sandbox.used
    assert sandbox.cause == "the sandbox does not hold: a command could reach the network"


def test_a_virtual_environment_under_tmp_is_shown_not_the_rest_of_tmp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The private /tmp must not take away a venv on PATH there (a CI clone, a scratch env)."""
    venv = tmp_path / "clone" / ".venv"
    (venv / "bin").mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{venv / 'bin'}:/usr/bin")
    shown = toolchains(tmp_path / "home", tmp=tmp_path)
    assert venv in shown and tmp_path not in shown and tmp_path / "clone" not in shown
