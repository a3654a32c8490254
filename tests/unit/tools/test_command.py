from __future__ import annotations

import asyncio
import dataclasses
import itertools
import os
import sys
import time
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.unit.tools import Buffers, call, context, marked, recorded_pid, started, summary
from tether.errors import ToolError
from tether.tools.command import KEEP_CHARS, Command, CommandParams

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX shell commands")

COMMAND = Command()


def dead(pid: int, within_s: float = 3.0) -> bool:
    """The process is gone, or killed and waiting to be reaped (a zombie is dead)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            state = ""
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


async def test_a_zero_exit_answers_the_exit_code_then_the_output(tmp_path: Path) -> None:
    out = await call(COMMAND, context(tmp_path), command="echo hello; echo world")
    assert out == "exit code: 0\nhello\nworld"


async def test_no_output_says_so(tmp_path: Path) -> None:
    assert await call(COMMAND, context(tmp_path), command="true") == "exit code: 0\n(no output)"


async def test_a_non_zero_exit_is_an_error_with_the_same_shape(tmp_path: Path) -> None:
    with pytest.raises(ToolError) as failed:
        await call(COMMAND, context(tmp_path), command="echo oops >&2; exit 3")
    assert str(failed.value) == "exit code: 3\noops"


async def test_stdout_and_stderr_are_merged_in_the_order_written(tmp_path: Path) -> None:
    out = await call(
        COMMAND, context(tmp_path), command="echo one; echo two >&2; echo three; echo four >&2"
    )
    assert out == "exit code: 0\none\ntwo\nthree\nfour"


async def test_it_runs_in_the_workspace_root_with_no_input(tmp_path: Path) -> None:
    out = await call(COMMAND, context(tmp_path), command="pwd; cat; echo end")
    assert out == f"exit code: 0\n{tmp_path.resolve()}\nend"


async def test_long_output_keeps_head_and_tail_with_a_note_of_what_was_cut(
    tmp_path: Path,
) -> None:
    out = await call(COMMAND, context(tmp_path), command="seq 1 300000")
    lines = out.splitlines()
    assert lines[:3] == ["exit code: 0", "1", "2"]
    assert lines[-1] == "300000"
    notes = [line for line in lines if line.startswith("[…")]
    assert len(notes) == 1
    kept = [int(line) for line in lines[1:] if not line.startswith("[…")]
    cut_lines = 300000 - len(kept)
    cut_chars = sum(len(f"{n}\n") for n in range(1, 300001)) - sum(len(f"{n}\n") for n in kept)
    assert notes[0] == f"[… {cut_chars:,} characters ({cut_lines:,} lines) cut …]"
    assert len(out) < 2 * KEEP_CHARS + 200
    # Whole lines either side of the cut: the numbers run on without a gap but one.
    gap = [b - a for a, b in itertools.pairwise(kept) if b - a != 1]
    assert gap == [cut_lines + 1]


async def test_a_timeout_kills_the_command_and_its_children(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    line = f"echo before; sh -c 'sleep 30 & echo $! > {pid_file}; wait'"
    began = time.monotonic()
    with pytest.raises(ToolError) as failed:
        await call(COMMAND, context(tmp_path), command=line, timeout_s=0.5)
    assert time.monotonic() - began < 5
    assert str(failed.value) == (
        "timed out after 0.5 s; the command and its children were killed\nbefore"
    )
    pid = recorded_pid(pid_file)
    assert pid is not None and dead(pid)


async def test_cancellation_kills_the_group_and_goes_on(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild.pid"
    line = f"sh -c 'sleep 30 & echo $! > {pid_file}; wait'"
    task = asyncio.ensure_future(call(COMMAND, context(tmp_path), command=line))
    pid = await started(pid_file)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert dead(pid)


async def test_background_processes_holding_the_output_are_killed_after_the_command(
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "bg.pid"
    began = time.monotonic()
    out = await call(
        COMMAND, context(tmp_path), command=f"sleep 30 & echo $! > {pid_file}; echo hi"
    )
    assert time.monotonic() - began < 10
    assert out.startswith("exit code: 0\nhi\n[the command exited, but processes it started")
    pid = recorded_pid(pid_file)
    assert pid is not None and dead(pid)


async def test_the_environment_hides_tether_settings_keys_and_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_X", "tether-setting")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai")
    monkeypatch.setenv("SOME_TOKEN", "the-secret-value")
    monkeypatch.setenv("HARMLESS", "visible")
    ctx = dataclasses.replace(context(tmp_path), secrets=("the-secret-value",))
    out = await call(COMMAND, ctx, command="env")
    assert "TETHER_X" not in out and "OPENAI_API_KEY" not in out
    assert "the-secret-value" not in out and "SOME_TOKEN" not in out
    assert "HARMLESS=visible" in out
    assert f"PATH={os.environ['PATH']}" in out


async def test_a_command_killed_by_a_signal_says_which(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match=r"^exit code: -9 \(killed by SIGKILL\)"):
        await call(COMMAND, context(tmp_path), command="kill -9 $$")


async def test_summary_preview_and_read_only(tmp_path: Path) -> None:
    ctx = context(tmp_path)
    assert summary(COMMAND, ctx, command="make   test\n  --verbose") == "make test --verbose"
    long = summary(COMMAND, ctx, command="echo " + "x" * 300)
    assert len(long) == 120 and long.endswith("…")
    preview = await COMMAND.preview(CommandParams(command="make test\n--verbose"), ctx, 2000)
    assert preview.whole
    assert preview.text == (
        f"in {ctx.workspace}:\n$ make test\n--verbose\n\n"
        "Runs WITHOUT the sandbox, with your full rights: the sandbox is off (sandbox.mode = off)"
    )
    assert not COMMAND.read_only(CommandParams(command="ls"), ctx)


async def test_a_long_command_shows_its_head_and_its_tail_and_its_length(tmp_path: Path) -> None:
    line = "echo '" + "x" * 5000 + "' && rm -rf ~"
    preview = await COMMAND.preview(CommandParams(command=line), context(tmp_path), 2000)
    assert not preview.whole and len(preview.text) < 2000
    assert preview.text.split("\n\n")[0].endswith("&& rm -rf ~")
    assert f"the command is {len(line):,} long" in preview.text


@pytest.mark.parametrize(
    "arguments",
    [{"command": ""}, {"command": "ls", "timeout_s": 0}, {"command": "ls", "timeout_s": 3601}],
)
def test_bad_arguments_are_refused(arguments: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        CommandParams.model_validate(arguments)


async def test_unsaved_documents_are_named_in_the_dialog_and_in_the_result(tmp_path: Path) -> None:
    """A command sees the disk; the person and the model are told which editor text it
    does not see (contract v2)."""
    (tmp_path / "a.py").write_text("X = 1\n")
    (tmp_path / "b.py").write_text("Y = 1\n")
    buffers = Buffers(
        {(tmp_path / "a.py").resolve(): "X = 2\n", (tmp_path / "b.py").resolve(): "Y = 1\n"}
    )
    ctx = context(tmp_path, buffers)
    params = CommandParams(command="cat a.py")

    preview = await COMMAND.preview(params, ctx, 2000)
    out = await COMMAND.run(params, ctx)

    assert preview.text.endswith(
        "\n\nUnsaved in the editor (the command sees the files on disk): a.py"
    )
    assert out.startswith("exit code: 0\nX = 1\n")
    assert "unsaved changes in a.py; this command saw those files as they are on disk" in out
    assert "b.py" not in out  # its text is what its file holds


async def test_a_failing_command_names_the_unsaved_documents_too(tmp_path: Path) -> None:
    buffers = Buffers({(tmp_path / "new.py").resolve(): "print('only in the editor')\n"})
    with pytest.raises(ToolError, match=r"(?s)exit code: 2.*unsaved changes in new\.py"):
        await call(COMMAND, context(tmp_path, buffers), command="python3 new.py")


async def test_with_every_document_saved_the_dialog_and_result_say_nothing_of_them(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.py").write_text("X = 1\n")
    ctx = context(tmp_path, Buffers({(tmp_path / "a.py").resolve(): "X = 1\n"}))
    params = CommandParams(command="true")
    assert "Unsaved" not in (await COMMAND.preview(params, ctx, 2000)).text
    assert await COMMAND.run(params, ctx) == "exit code: 0\n(no output)"


async def test_the_output_goes_to_the_live_sink_as_it_comes(tmp_path: Path) -> None:
    seen: list[tuple[float, str]] = []
    ctx = dataclasses.replace(
        context(tmp_path), output=lambda text: seen.append((time.monotonic(), text))
    )
    started_at = time.monotonic()
    out = await call(COMMAND, ctx, command="echo first; sleep 0.5; echo second")
    assert out == "exit code: 0\nfirst\nsecond"
    assert "".join(text for _, text in seen) == "first\nsecond\n"
    first_at = next(at for at, text in seen if "first" in text)
    assert first_at - started_at < 0.4  # not held until the command ended


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds processes in /proc")
async def test_a_cancel_repeated_while_the_shell_starts_still_kills_its_group(
    tmp_path: Path,
) -> None:
    """A turn can be cancelled twice (``tether.cancel``, then ``$/cancelRequest``): the
    second cancel must not stop the kill of a shell that was still starting."""
    for attempt in range(30):
        nap = f"30.{os.getpid()}{attempt:03d}"
        task = asyncio.ensure_future(call(COMMAND, context(tmp_path), command=f"sleep {nap}"))
        for _ in range(attempt % 6):
            await asyncio.sleep(0)  # a different moment of the start each time
        while not task.done():
            task.cancel()
            await asyncio.sleep(0)
        with pytest.raises(asyncio.CancelledError):
            await task
        deadline = time.monotonic() + 3
        while (left := marked(nap)) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert left == [], f"attempt {attempt}: the command's sleep survived"
