"""The terminal's commands and `tether serve` by hand: real processes, the provider stub."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import StartEditor, server_env
from tests.support.provider_stub import ProviderStub, error, hang, text, tool_calls
from tests.unit.terminal.test_console import screen
from tether.config import Settings
from tether.mcp_source.workspace import Permits, workspace_servers
from tether.store import Store

TCP = ("--tcp", "127.0.0.1:0")
FAST_RETRIES = json.dumps({"provider": {"retry_base_s": 0.01, "max_retries": 3}})


@dataclass
class Ran:
    code: int
    out: str
    err: str


async def tether(
    *args: str,
    cwd: Path,
    env: dict[str, str],
    interrupts: int = 0,
    stdin: int = asyncio.subprocess.DEVNULL,
    timeout: float = 60,
) -> Ran:
    """Run ``python -m tether ARGS``; with ``interrupts``, press Ctrl-C that many times
    once the answer has begun to stream."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tether", *args,
        cwd=cwd, env=env, stdin=stdin,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    async with asyncio.timeout(timeout):
        out = b""
        if interrupts:
            out = await process.stdout.read(1)  # the first streamed character
            for _ in range(interrupts):
                process.send_signal(signal.SIGINT)
        rest, err = await process.communicate()
    return Ran(process.returncode or 0, (out + rest).decode(), err.decode())


def cli_env(stub: ProviderStub, home: Path, **extra: str) -> dict[str, str]:
    return server_env(stub, home, **({"TETHER_ASK_OPTIONS": FAST_RETRIES, "NO_COLOR": "1"} | extra))


def session_of(ran: Ran) -> str:
    return ran.err.strip().splitlines()[-1].removeprefix("session: ")


@contextlib.contextmanager
def typed_at_a_terminal(typed: bytes) -> Iterator[int]:
    """A terminal for stdin, holding ``typed`` until the questions read it."""
    import pty

    controller, follower = pty.openpty()
    os.write(controller, typed)
    try:
        yield follower
    finally:
        os.close(follower)
        os.close(controller)


async def test_a_plain_answer_streams_to_stdout_and_names_the_session(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    stub.script(text("Hello from the model", chunk_size=3))

    ran = await tether("ask", "say", "hello", cwd=workspace, env=cli_env(stub, home))

    assert ran.code == 0, ran.err
    assert ran.out == "Hello from the model\n"
    assert ran.err.strip().splitlines()[-1].startswith("session: ")
    assert stub.requests[0]["messages"][-1] == {"role": "user", "content": "say hello"}
    assert str(workspace) in stub.requests[0]["messages"][0]["content"]


async def test_a_tool_round_trip_shows_the_calls_on_stderr_and_the_answer_on_stdout(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    stub.script(
        tool_calls(("fs-read", {"path": "notes.txt"}), ("fs-read", {"path": "gone.txt"})),
        text("It says alpha, beta."),
    )

    ran = await tether(
        "ask", "what is in notes.txt?", "--workspace", str(workspace),
        cwd=workspace, env=cli_env(stub, home),
    )  # fmt: skip

    assert ran.code == 0, ran.err
    assert ran.out == "It says alpha, beta.\n"
    lines = ran.err.splitlines()
    assert "  → fs-read: read notes.txt" in lines
    assert "  ✓ fs-read" in lines
    failed = next(line for line in lines if line.startswith("  ✗ fs-read: "))
    assert "gone.txt" in failed
    answer = next(m for m in stub.requests[1]["messages"] if m["role"] == "tool")
    assert "alpha" in answer["content"]


async def test_session_continues_a_conversation_and_sessions_lists_it(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    env = cli_env(stub, home)
    stub.script(text("first answer"), text("second answer"))

    first = await tether("ask", "first question", cwd=workspace, env=env)
    session = session_of(first)
    second = await tether("ask", "--session", session, "second question", cwd=workspace, env=env)
    listed = await tether("sessions", "--workspace", str(workspace), cwd=workspace, env=env)

    assert (first.code, second.code) == (0, 0), first.err + second.err
    assert session_of(second) == session and second.out == "second answer\n"
    exchange = [(m["role"], m["content"]) for m in stub.requests[1]["messages"][1:]]
    assert exchange == [
        ("user", "first question"),
        ("assistant", "first answer"),
        ("user", "second question"),
    ]
    assert listed.code == 0, listed.err
    header, row = listed.out.splitlines()
    assert header.split() == ["ID", "STATUS", "UPDATED", "TITLE"]
    assert row.split()[:2] == [session, "done"] and row.endswith("first question")


async def test_sessions_are_listed_newest_first(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    env = cli_env(stub, home)
    stub.script(text("a"), text("b"))
    older = session_of(await tether("ask", "older", cwd=workspace, env=env))
    # The second ask starts only once the first has exited: its session is the newer.
    newer = session_of(await tether("ask", "newer", cwd=workspace, env=env))

    listed = await tether("sessions", cwd=workspace, env=env)

    assert [line.split()[0] for line in listed.out.splitlines()[1:]] == [newer, older]


async def test_no_sessions_says_so(stub: ProviderStub, workspace: Path, home: Path) -> None:
    listed = await tether("sessions", cwd=workspace, env=cli_env(stub, home))

    assert listed.code == 0 and listed.out == ""
    assert "no sessions yet" in listed.err


async def test_a_provider_error_exits_1_with_its_message(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    stub.script(*[error(500, "the model is overloaded")] * 4)

    ran = await tether("ask", "hello", cwd=workspace, env=cli_env(stub, home))

    assert ran.code == 1
    assert "the model is overloaded" in ran.err and "500" in ran.err
    assert "Traceback" not in ran.err and ran.out == ""
    assert len(stub.requests) == 4
    assert ran.err.strip().splitlines()[-1].startswith("session: ")


async def test_an_unreachable_provider_names_tether_base_url(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"

    ran = await tether(
        "ask", "hello", cwd=workspace, env=cli_env(stub, home, TETHER_BASE_URL=closed)
    )

    assert ran.code == 1
    assert closed in ran.err and "TETHER_BASE_URL" in ran.err
    assert "Traceback" not in ran.err


async def test_an_unknown_session_is_one_line_and_exit_1(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    ran = await tether("ask", "--session", "nope", "hi", cwd=workspace, env=cli_env(stub, home))

    assert ran.code == 1
    assert ran.err.strip() == "tether: unknown session 'nope'"
    assert stub.requests == []


async def test_bad_tether_ask_options_are_refused_plainly(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    env = cli_env(stub, home, TETHER_ASK_OPTIONS="[1, 2]")

    ran = await tether("ask", "hi", cwd=workspace, env=env)

    assert ran.code == 1 and "TETHER_ASK_OPTIONS" in ran.err and "Traceback" not in ran.err


def budget_of_one(stub: ProviderStub, home: Path, workspace: Path) -> dict[str, str]:
    (workspace / "notes.txt").write_text("alpha\n")
    stub.script(tool_calls(("fs-read", {"path": "notes.txt"}), ("fs-list", {})), text("Read both."))
    return cli_env(stub, home, TETHER_ASK_OPTIONS=json.dumps({"turn": {"tool_budget": 1}}))


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
async def test_a_question_from_the_server_is_answered_at_the_terminal(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    env = budget_of_one(stub, home, workspace)
    with typed_at_a_terminal(b"1\n") as stdin:
        ran = await tether("ask", "read both", cwd=workspace, env=env, stdin=stdin)

    assert ran.code == 0, ran.err
    assert ran.out == "Read both.\n"
    lines = ran.err.splitlines()
    assert "budget of 1 tool calls" in ran.err and "    1) Extend" in lines
    # Both calls ran (the typed answer's newline is echoed by a real terminal, not here).
    assert "  ✓ fs-read" in ran.err and "  ✓ fs-list" in ran.err and "✗" not in ran.err


async def test_a_question_with_no_terminal_to_answer_is_left_unanswered(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    ran = await tether("ask", "read both", cwd=workspace, env=budget_of_one(stub, home, workspace))

    assert ran.code == 1
    assert "budget of 1 tool calls" in ran.err and "  left pending" in ran.err.splitlines()
    assert "  · stopped" in ran.err.splitlines() and "tether: stopped: " in ran.err


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
@pytest.mark.parametrize("typed", [b"allow\n", b"y\n"])
async def test_a_command_allowed_at_the_terminal_runs(
    stub: ProviderStub, workspace: Path, home: Path, typed: bytes
) -> None:
    stub.script(tool_calls(("command", {"command": "echo hi > out.txt"})), text("Ran it."))
    with typed_at_a_terminal(typed) as stdin:
        ran = await tether("ask", "run it", cwd=workspace, env=cli_env(stub, home), stdin=stdin)

    assert ran.code == 0, ran.err
    assert ran.out == "Ran it.\n" and (workspace / "out.txt").read_text() == "hi\n"
    lines = ran.err.splitlines()
    assert "    1) Allow" in lines and "  ✓ command" in lines
    # After the prompt's line, which a terminal ends with the typed answer's echo.
    assert "  ✓ allowed: command: echo hi > out.txt\n" in ran.err


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
async def test_deny_at_the_prompt_takes_a_reason_and_says_it_once(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    (workspace / "out.txt").write_text("keep me\n")
    stub.script(tool_calls(("command", {"command": "rm out.txt"})), text("Kept it."))
    with typed_at_a_terminal(b"n\nnot before Friday\n") as stdin:
        ran = await tether("ask", "tidy up", cwd=workspace, env=cli_env(stub, home), stdin=stdin)

    assert ran.code == 0, ran.err
    assert ran.out == "Kept it.\n" and (workspace / "out.txt").exists()
    # One line for the call, one for its denial (after the prompts' line, which a terminal
    # ends with the echo of what was typed); the turn resumed by the denial adds none.
    assert ran.err.count("  → command: rm out.txt\n") == 1
    assert ran.err.count("  ✗ ") == 1
    assert "  ✗ denied: command: rm out.txt (not before Friday)\n" in ran.err
    assert "left pending" not in ran.err and "awaiting_approval" not in ran.err
    answer = next(m for m in stub.requests[1]["messages"] if m["role"] == "tool")
    assert "not before Friday" in answer["content"]


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
async def test_a_commands_output_is_shown_and_a_failures_tail_stays(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    script = "import sys; print('checking'); sys.exit('No module named pytest')"
    command = f"{shlex.quote(sys.executable)} -u -c {shlex.quote(script)}"
    stub.script(tool_calls(("command", {"command": command})), text("It failed."))
    with typed_at_a_terminal(b"y\n") as stdin:
        ran = await tether("ask", "test it", cwd=workspace, env=cli_env(stub, home), stdin=stdin)

    assert ran.code == 0, ran.err
    lines = ran.err.splitlines()
    shown = [line for line in lines if line.startswith("    │ ")]
    assert shown == ["    │ checking", "    │ No module named pytest"]
    assert lines.index("    │ No module named pytest") < lines.index("  ✗ command: exit code: 1")


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
async def test_at_a_terminal_a_running_commands_output_is_dimmed_and_its_tail_stays(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    """stderr on a real terminal: the output shows dimmed as it comes, as a window of its
    last lines redrawn in place, and once the command ends its tail stays on screen."""
    script = "import time\nfor n in range(1, 9):\n    print('line', n); time.sleep(0.25)"
    command = f"{shlex.quote(sys.executable)} -u -c {shlex.quote(script)}; exit 1"
    stub.script(tool_calls(("command", {"command": command})), text("It failed."))
    env = cli_env(stub, home, TERM="xterm")
    del env["NO_COLOR"]
    import pty

    controller, follower = pty.openpty()
    os.write(controller, b"y\n")
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tether", "ask", "test it",
        cwd=workspace, env=env, stdin=follower, stderr=follower,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    os.close(follower)

    def read_all() -> bytes:
        seen = b""
        with contextlib.suppress(OSError):  # EIO: the terminal's last writer has gone
            while chunk := os.read(controller, 4096):
                seen += chunk
        return seen

    try:
        async with asyncio.timeout(60):
            written, (out, _) = await asyncio.gather(
                asyncio.to_thread(read_all), process.communicate()
            )
    finally:
        os.close(controller)

    err = written.decode().replace("\r\n", "\n")
    assert process.returncode == 0 and out == b"It failed.\n", err
    assert "\x1b[2m    │ line 1\x1b[0m" in err  # dimmed, as it came
    assert re.search(r"\x1b\[\dF\x1b\[J", err)  # the window, redrawn in place
    shown = screen(re.sub(r"\x1b\[\d*m", "", err))
    end = shown.index("  ✗ command: exit code: 1")
    assert shown[end - 6 : end] == ["    │ … 3 more lines"] + [
        f"    │ line {n}" for n in range(4, 9)
    ]


async def test_an_approval_nobody_can_answer_exits_3_and_says_how_to_go_on(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    stub.script(tool_calls(("command", {"command": "echo hi > out.txt"})))

    ran = await tether("ask", "run it", cwd=workspace, env=cli_env(stub, home))

    assert ran.code == 3, ran.err
    session = session_of(ran)
    assert "  waiting for approval: command: echo hi > out.txt" in ran.err.splitlines()
    assert f"tether ask --session {session}" in ran.err
    assert f"tether approve {session}" in ran.err
    assert not (workspace / "out.txt").exists()


async def test_tether_approve_resumes_a_parked_turn_and_tether_deny_says_why(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    env = cli_env(stub, home)
    stub.script(
        tool_calls(("command", {"command": "echo hi > out.txt"})),
        text("ran it"),
        tool_calls(("command", {"command": "rm out.txt"})),
        text("kept it"),
    )
    parked = await tether("ask", "run it", cwd=workspace, env=env)
    session = session_of(parked)

    approved = await tether("approve", session, cwd=workspace, env=env)

    assert approved.code == 0, approved.err
    assert "ran it" in approved.out and (workspace / "out.txt").read_text() == "hi\n"

    await tether("ask", "--session", session, "remove it", cwd=workspace, env=env)
    denied = await tether("deny", session, "--reason", "keep it", cwd=workspace, env=env)

    assert denied.code == 0, denied.err
    assert (workspace / "out.txt").exists()
    assert "keep it" in stub.requests[-1]["messages"][-2]["content"]  # [-1]: the nudge

    nothing = await tether("approve", session, cwd=workspace, env=env)
    assert nothing.code == 1 and "no calls waiting for approval" in nothing.err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
async def test_ctrl_c_cancels_the_turn_and_exits_130(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    env = cli_env(stub, home)
    stub.script(text("a long answer " * 100, chunk_size=2, delay_s=0.02))

    ran = await tether("ask", "talk", cwd=workspace, env=env, interrupts=1)

    assert ran.code == 130, ran.err
    assert "cancelling" in ran.err and "  · cancelled" in ran.err.splitlines()
    assert "Traceback" not in ran.err
    assert len(ran.out) < len("a long answer " * 100)
    session = session_of(ran)
    listed = await tether("sessions", cwd=workspace, env=env)
    assert listed.out.splitlines()[1].split()[:2] == [session, "cancelled"]


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
async def test_a_second_ctrl_c_quits_at_once(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    stub.script(text("x" * 400, chunk_size=1, delay_s=0.05))

    ran = await tether("ask", "talk", cwd=workspace, env=cli_env(stub, home), interrupts=2)

    assert ran.code == 130 and "Traceback" not in ran.err


def crashing_server(tmp_path: Path, env: dict[str, str], code: str) -> dict[str, str]:
    """The environment with a ``sitecustomize`` that runs ``code`` in ``tether serve`` only."""
    site = tmp_path / "site"
    site.mkdir()
    body = textwrap.indent(textwrap.dedent(code).strip(), "    ")
    (site / "sitecustomize.py").write_text(
        f"import sys\nif sys.orig_argv[-1:] == ['serve']:\n{body}\n"
    )
    return env | {"PYTHONPATH": os.pathsep.join([str(site), env.get("PYTHONPATH", "")])}


async def test_a_server_that_cannot_start_is_one_line_and_exit_1(
    stub: ProviderStub, workspace: Path, home: Path, tmp_path: Path
) -> None:
    env = crashing_server(
        tmp_path, cli_env(stub, home), "import os; os.write(2, b'no server today\\n'); os._exit(1)"
    )

    ran = await tether("ask", "hi", cwd=workspace, env=env)

    assert ran.code == 1
    assert ran.err.strip().splitlines() == [
        "tether: the server stopped unexpectedly (exit code 1): no server today; "
        "set TETHER_DEBUG=1 to see its log"
    ]


async def test_a_server_that_dies_mid_turn_is_one_line_and_exit_1(
    stub: ProviderStub, workspace: Path, home: Path, tmp_path: Path
) -> None:
    stub.script(hang(30))
    told = tmp_path / "die-now"
    die_when_told = f"""
        import os, threading, time
        def die_when_told():
            while not os.path.exists({str(told)!r}):
                time.sleep(0.01)
            os._exit(9)
        threading.Thread(target=die_when_told, daemon=True).start()
    """
    env = crashing_server(tmp_path, cli_env(stub, home), die_when_told)

    asking = asyncio.create_task(tether("ask", "hi", cwd=workspace, env=env, timeout=20))
    await stub.wait_for_requests_async(1, timeout=15)  # mid-turn: the request hangs
    told.touch()
    ran = await asking

    assert ran.code == 1
    assert "the server stopped unexpectedly (exit code 9)" in ran.err
    assert "Traceback" not in ran.err


async def test_help_lists_the_environment_and_the_exit_codes(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    env = cli_env(stub, home)
    ask, serve, approve = [
        await tether(command, "--help", cwd=workspace, env=env)
        for command in ("ask", "serve", "approve")
    ]

    provider = ["TETHER_MODEL", "TETHER_BASE_URL", "TETHER_PROVIDER", "TETHER_API_KEY"]
    for name in [*provider, "TETHER_HOME", "TETHER_ASK_OPTIONS", "TETHER_DEBUG", "NO_COLOR"]:
        assert name in ask.out and name in approve.out, name
    for name in [*provider, "TETHER_HOME"]:
        assert name in serve.out, name
    for ran in (ask, approve):
        assert ran.code == 0 and "exit codes:" in ran.out
        assert all(f"\n  {code} " in ran.out for code in (0, 1, 3, 130))
    assert " ".join(ask.out.split()).count("--workspace DIR the project folder the agent")
    assert "git root" in ask.out
    assert serve.code == 0 and "exit codes:" in serve.out and "--allow-remote" in serve.out


async def test_ask_from_a_subfolder_works_in_the_git_root(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    subprocess.run(["git", "init", "-q", str(workspace)], check=True, timeout=30)
    inner = workspace / "src" / "pkg"
    inner.mkdir(parents=True)
    env = cli_env(stub, home)
    stub.script(text("at the root"), text("inside"))

    rooted = await tether("ask", "where?", cwd=inner, env=env)
    listed = await tether("sessions", cwd=workspace, env=env)
    given = await tether("ask", "--workspace", ".", "and here?", cwd=inner, env=env)

    assert (rooted.code, given.code) == (0, 0), rooted.err + given.err
    first, second = (r["messages"][0]["content"] for r in stub.requests)
    assert f"The workspace root is {workspace} " in first
    assert f"The workspace root is {inner} " in second
    assert session_of(rooted) in listed.out


async def test_the_terminals_servers_leave_a_due_task_to_the_editors(
    start_editor: StartEditor, stub: ProviderStub, workspace: Path, home: Path
) -> None:
    """`tether sessions`, `rules` and `ask` start short-lived servers: none of them runs a
    scheduled task that is due (nor shows its updates); the next editor's server does."""
    editor = await start_editor()
    await editor.command("tether.schedule", {"prompt": "tick", "every": "1s"})
    editor.kill()
    await asyncio.sleep(1.2)  # wall-clock time: the task falls due while no editor runs
    env = cli_env(stub, home)
    stub.script(text("hello back"), text("tock"))

    listed = await tether("sessions", cwd=workspace, env=env)
    rules = await tether("rules", cwd=workspace, env=env)
    asked = await tether("ask", "hello", cwd=workspace, env=env)

    assert (listed.code, rules.code, asked.code) == (0, 0, 0), asked.err
    assert asked.out == "hello back\n"
    assert [r["messages"][-1]["content"] for r in stub.requests] == ["hello"]
    restarted = await start_editor()
    await stub.wait_for_requests_async(2, timeout=15)
    assert stub.requests[1]["messages"][-1]["content"] == "tick"
    (task,) = (await restarted.command("tether.tasks", {}))["tasks"]
    await restarted.command("tether.unschedule", {"task": task["id"]})


async def test_listings_and_a_decision_with_nothing_waiting_answer_from_the_store_at_once(
    stub: ProviderStub, workspace: Path, home: Path, tmp_path: Path
) -> None:
    """`tether sessions`, `rules`, `forget` and an `approve` / `deny` with nothing to decide
    start no server (here one would fail), and each answers within a second (a server's
    start-up alone took 2-6 s of it on this machine)."""
    env = cli_env(stub, home)
    stub.script(tool_calls(("command", {"command": "echo hi > out.txt"})))
    parked = session_of(await tether("ask", "run it", cwd=workspace, env=env))
    stub.script(tool_calls(("command", {"command": "echo hi > out.txt"})), text("ran it"))
    with typed_at_a_terminal(b"allow always\n") as stdin:
        done = session_of(await tether("ask", "again", cwd=workspace, env=env, stdin=stdin))
    no_server = crashing_server(
        tmp_path, env, "import os; os.write(2, b'a server was started\\n'); os._exit(1)"
    )

    async def timed(*args: str) -> tuple[Ran, float]:
        started = time.monotonic()
        ran = await tether(*args, cwd=workspace, env=no_server)
        return ran, time.monotonic() - started

    listed, listed_s = await timed("sessions")
    rules, rules_s = await timed("rules")
    nothing, nothing_s = await timed("approve", done)
    unknown, unknown_s = await timed("deny", "nope", "--reason", "no")
    not_ours, _ = await timed("forget", "999")
    forgot, _ = await timed("forget", rules.out.split()[0])

    assert "a server was started" not in "".join(
        r.err for r in (listed, rules, nothing, unknown, not_ours, forgot)
    )
    assert listed.code == 0 and {line.split()[0] for line in listed.out.splitlines()[1:]} == {
        parked,
        done,
    }
    assert [line.split()[:2] for line in listed.out.splitlines()[1:] if parked in line] == [
        [parked, "awaiting_approval"]
    ]
    assert rules.code == 0 and "command" in rules.out and "echo hi > out.txt" in rules.out
    assert (nothing.code, nothing.err) == (
        1,
        f"tether: session {done!r} has no calls waiting for approval\n",
    )
    assert (unknown.code, unknown.err) == (1, "tether: unknown session 'nope'\n")
    assert not_ours.code == 1 and "no rule 999 here" in not_ours.err
    assert forgot.code == 0 and (await timed("rules"))[0].out == ""
    print(f"sessions {listed_s:.2f} s, rules {rules_s:.2f} s, approve {nothing_s:.2f} s")
    assert max(listed_s, rules_s, nothing_s, unknown_s) < 1.0
    # A parked session still goes to a server, which resumes its turn.
    stub.script(text("ran it"))
    approved = await tether("approve", parked, cwd=workspace, env=env)
    assert approved.code == 0 and approved.out == "ran it\n", approved.err


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT")
def test_ctrl_c_at_any_moment_of_the_start_is_quiet(
    stub: ProviderStub, home: Path, workspace: Path
) -> None:
    """A Ctrl-C that lands inside an extension module's import (pydantic_core's) once made
    a Rust panic with a traceback and exit code 1. Ten moments across the start."""
    for tenth in range(10):
        server = subprocess.Popen(
            [sys.executable, "-m", "tether", "serve", *TCP],
            cwd=workspace, env=cli_env(stub, home), stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        time.sleep(0.15 + tenth * 0.09)
        server.send_signal(signal.SIGINT)
        _, err = server.communicate(timeout=30)
        said = err.decode(errors="replace")
        assert server.returncode == 130 and "Traceback" not in said, (tenth, said[-2000:])


@pytest.mark.skipif(sys.platform == "win32", reason="pty, SIGINT")
@pytest.mark.parametrize(
    ("mode", "when"),
    [(("--stdio",), "starting"), (("--stdio",), "serving"), (TCP, "starting"), (TCP, "serving")],
)
def test_serve_by_hand_says_where_it_listens_and_ctrl_c_is_quiet(
    stub: ProviderStub, home: Path, workspace: Path, mode: tuple[str, ...], when: str
) -> None:
    """Started at a terminal, `tether serve` says where it speaks LSP; Ctrl-C stops it with
    exit code 130 and nothing more, whether it comes while the server still imports its
    modules (about a second) or once it serves."""
    tcp = mode == TCP
    with typed_at_a_terminal(b"") as terminal:
        server = subprocess.Popen(
            [sys.executable, "-m", "tether", "serve", *mode],
            cwd=workspace, env=cli_env(stub, home), stdin=terminal,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        assert server.stderr is not None
        try:
            said = b""
            if tcp and when == "starting":
                time.sleep(0.5)  # Python runs tether's code; the server's imports go on
            else:
                # stdio: said at once, before the imports; --tcp: once it listens.
                said += server.stderr.readline() + (server.stderr.readline() if tcp else b"")
                if not tcp and when == "serving":
                    time.sleep(4)  # nothing shows that it serves: give its imports time
            server.send_signal(signal.SIGINT)
            out, err = server.communicate(timeout=30)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()

    lines = (said + err).decode().splitlines()
    assert server.returncode == 130, lines
    assert out == b""
    if not tcp:
        assert lines == [
            "tether serve: speaking LSP on stdin and stdout (an editor starts this itself; "
            "`tether ask` talks to it for you). Ctrl-C stops it."
        ]
    elif when == "serving":
        assert len(lines) == 2 and lines[0].startswith("listening on 127.0.0.1:"), lines
        port = int(lines[0].rsplit(":", 1)[1])
        assert port > 0 and lines[1] == f"token file: {home / 'tcp-token'}"
    else:  # stopped before or just as it listened
        assert all(line.startswith(("listening on", "token file:")) for line in lines), lines


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="bubblewrap is Linux's")
async def test_doctor_says_whether_commands_run_in_the_sandbox_and_why_not(
    stub: ProviderStub, home: Path, workspace: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text(
        "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    )
    (fake / "bwrap").chmod(0o755)
    broken = cli_env(stub, home, PATH=f"{fake}:/usr/bin:/bin")

    refused = await tether("doctor", cwd=workspace, env=broken)

    assert refused.code == 1
    assert "sandbox: NOT USED (sandbox.mode = auto): user namespaces are restricted" in refused.out
    assert f"bwrap: {fake / 'bwrap'}" in refused.out and "model stub-model" in refused.out
    if shutil.which("bwrap"):  # the real one, as CI installs it
        fine = await tether("doctor", cwd=workspace, env=cli_env(stub, home))
        assert fine.code == 0, fine.out
        assert "sandbox: on (sandbox.mode = auto); its probe holds" in fine.out


async def test_doctor_lists_each_mcp_server_and_which_wait_to_be_allowed(
    stub: ProviderStub, home: Path, workspace: Path
) -> None:
    entries = {"kept": {"command": "kept-server"}, "new": {"command": "uvx", "args": ["x y"]}}
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": entries}))
    works = {"command": sys.executable, "args": ["-m", "tests.support.mcp_server"]}
    works["cwd"] = str(Path(__file__).resolve().parents[2])
    docs = {"url": "http://127.0.0.1:9/mcp"}  # nothing listens on the discard port
    options = {"mcp": {"servers": {"docs": docs, "works": works}}}
    env = cli_env(stub, home, TETHER_ASK_OPTIONS=json.dumps(options))
    store = Store(Settings.load(env).state_dir / "sessions.sqlite3")

    class Yes:
        async def allow_server(self, name: str, shown: str) -> bool:
            return True

    kept = workspace_servers(workspace)[0]["kept"]
    await Permits(store.rules, str(workspace.resolve()), Yes()).ask(kept)
    store.close()

    ran = await tether("doctor", cwd=workspace, env=env)

    # Each server tether would start is started for a moment: its state, its tools.
    assert "mcp server docs (settings): http://127.0.0.1:9/mcp: FAILED: " in ran.out
    assert re.search(r"mcp server works \(settings\): .*: running, \d+ tools\n", ran.out)
    kept_line = f"mcp server kept (.mcp.json, allowed): kept-server (in {workspace}): FAILED: "
    assert kept_line in ran.out
    assert ran.code == 1  # a server that fails needs the person's attention
    assert (
        f"mcp server new (.mcp.json, WAITS for the person to allow it): uvx 'x y' (in {workspace})"
        in ran.out
    )
