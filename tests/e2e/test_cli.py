"""``tether ask`` and ``tether sessions``: the real CLI, its own server, the provider stub."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.conftest import server_env
from tests.support.provider_stub import ProviderStub, error, hang, text, tool_calls

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
    import pty

    env = budget_of_one(stub, home, workspace)
    controller, follower = pty.openpty()
    os.write(controller, b"1\n")  # the terminal holds the line until the question reads it
    try:
        ran = await tether("ask", "read both", cwd=workspace, env=env, stdin=follower)
    finally:
        os.close(follower)
        os.close(controller)

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
async def test_a_command_allowed_at_the_terminal_runs(
    stub: ProviderStub, workspace: Path, home: Path
) -> None:
    import pty

    stub.script(tool_calls(("command", {"command": "echo hi > out.txt"})), text("Ran it."))
    controller, follower = pty.openpty()
    os.write(controller, b"allow\n")
    try:
        ran = await tether("ask", "run it", cwd=workspace, env=cli_env(stub, home), stdin=follower)
    finally:
        os.close(follower)
        os.close(controller)

    assert ran.code == 0, ran.err
    assert ran.out == "Ran it.\n" and (workspace / "out.txt").read_text() == "hi\n"
    assert "    1) Allow" in ran.err.splitlines() and "  ✓ command" in ran.err


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
