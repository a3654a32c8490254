"""Stock Emacs eglot, no plugin, against a real ``tether serve`` and the provider stub.

Each test scripts the stub, then runs one scenario (``editors/emacs/tests/<name>.el``)
with ``emacs --batch -l``: eglot connects to ``tether serve`` as ``eglot-server-programs``
names it, and the scenario drives it through eglot's own handlers and ``jsonrpc-request``,
writes what it saw as JSON, and exits non-zero when an expectation fails. What only the
outside can see (files on disk, what the provider was sent) is checked here.

Debian 12's ``emacs-nox`` is Emacs 28.2, whose eglot is ``elpa-eglot`` (1.9); Emacs 29 and
newer have eglot built in. Without either, these tests are skipped, saying why.
``TETHER_EMACS=/path/to/emacs`` picks another Emacs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import server_env
from tests.support.provider_stub import ProviderStub, text, tool_calls

SCENARIOS = Path(__file__).resolve().parents[2] / "editors" / "emacs" / "tests"
COMMAND = ("command", {"command": "echo hi > out.txt"})


@pytest.fixture(scope="module")
def emacs() -> str:
    found = os.environ.get("TETHER_EMACS") or shutil.which("emacs")
    if found is None:
        pytest.skip("no emacs on PATH (Debian: apt-get install emacs-nox elpa-eglot)")
    probe = subprocess.run(
        [found, "--batch", "--eval", "(progn (require 'eglot) (princ emacs-version))"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    if probe.returncode != 0:
        pytest.skip(f"{found} has no eglot (Emacs 28: apt-get install elpa-eglot)")
    return found


@pytest.fixture
def git_workspace(workspace: Path) -> Path:
    """A git repository (eglot's project is the VC root) holding the file eglot visits."""
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=30)
    (workspace / "notes.txt").write_text("notes\n")
    return workspace


def run(emacs: str, name: str, stub: ProviderStub, workspace: Path, tmp_path: Path) -> Any:
    """Run ``<name>.el`` in ``workspace``; the report it wrote."""
    tether = Path(sys.executable).with_name("tether")
    if not tether.exists():
        pytest.fail(f"no {tether}: pip install -e . installs the `tether` command")
    env = server_env(stub, tmp_path / "tether-home")
    # eglot-server-programs names `tether serve`, as a person's configuration would: the
    # `tether` of this Python comes first on PATH.
    env["PATH"] = os.pathsep.join([str(tether.parent), env.get("PATH", "")])
    env["HOME"] = str(tmp_path / "emacs-home")  # no user files, nothing written to theirs
    report = tmp_path / f"{name}.json"
    env["TETHER_SCENARIO_REPORT"] = str(report)
    done = subprocess.run(
        [emacs, "--batch", "-l", str(SCENARIOS / f"{name}.el")],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0 or not report.exists():
        pytest.fail(
            f"scenario {name} exited {done.returncode}\n--- emacs stderr\n{done.stderr[-6000:]}"
            f"\n--- emacs stdout\n{done.stdout[-2000:]}"
        )
    print(done.stderr)  # eglot's messages: shown with -s or on failure
    return json.loads(report.read_text())


SLOW_ANSWER = "Ran it, after a long think."


def test_a_turn_longer_than_eglots_request_timeout_succeeds_and_its_dialog_is_answered(
    emacs: str, stub: ProviderStub, git_workspace: Path, tmp_path: Path
) -> None:
    # The answer streams for about 12 s: longer than any request of eglot's may take.
    stub.script(tool_calls(COMMAND), text(SLOW_ANSWER, chunk_size=1, delay_s=0.45))

    report = run(emacs, "allow-in-the-dialog", stub, git_workspace, tmp_path)

    # "wait": false: the session at once; the turn ends long after eglot's (stock, 10 s)
    # request timeout, and nothing failed for it.
    assert report["request_timeout"] == 10
    assert report["started"]["status"] == "running" and report["started"]["session"]
    assert report["run_seconds"] < 5
    assert report["turn_seconds"] > report["request_timeout"]
    # The dialog reached eglot's own window/showMessageRequest handler (eglot advertises
    # no messageActionItem), showing the command whole.
    (dialog,) = report["dialogs"]
    assert "echo hi > out.txt" in dialog["prompt"]
    assert dialog["choices"][0] == "Allow" and "Deny" in dialog["choices"]
    # The command ran, and the turn's end was read back through the contract's commands.
    assert (git_workspace / "out.txt").read_text() == "hi\n"
    assert report["status"] == "done"
    assert report["tool"]["status"] == "ok" and "exit code: 0" in report["tool"]["content"]
    assert report["answer"] == SLOW_ANSWER
    tool_message = next(m for m in stub.requests[1]["messages"] if m["role"] == "tool")
    assert "exit code: 0" in tool_message["content"]


def test_a_parked_call_is_allowed_from_eglots_code_actions(
    emacs: str, stub: ProviderStub, git_workspace: Path, tmp_path: Path
) -> None:
    stub.script(tool_calls(COMMAND), text("Ran it."))

    report = run(emacs, "approve-by-code-action", stub, git_workspace, tmp_path)

    assert report["parked"] == "awaiting_approval"
    (menu,) = report["dialogs"]  # no approval dialog: dialogs are off; the code action menu
    assert "Allow: echo hi > out.txt" in menu["choices"]
    assert "Deny: echo hi > out.txt" in menu["choices"]
    assert report["status"] == "done"
    assert (git_workspace / "out.txt").read_text() == "hi\n"


def test_the_readmes_functions_ask_and_show_the_answer(
    emacs: str, stub: ProviderStub, git_workspace: Path, tmp_path: Path
) -> None:
    stub.script(tool_calls(COMMAND), text("Ran it."), text("Again."))

    report = run(emacs, "readme", stub, git_workspace, tmp_path)

    assert report["first_answer"] == "tether (done): Ran it."
    assert report["same_session"] is True
    assert report["second_answer"] == "tether (done): Again."
    assert (git_workspace / "out.txt").read_text() == "hi\n"
    assert stub.requests[-1]["messages"][-1] == {"role": "user", "content": "and again?"}
