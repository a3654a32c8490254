"""The terminal transcript: what ``tether ask`` prints for each update and outcome."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tether.terminal.console import Console


def render(capsys: pytest.CaptureFixture[str], *updates: dict[str, object]) -> tuple[str, str]:
    console = Console()
    for update in updates:
        console.update({"session": "s1", **update})
    console.end_text()
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_text_goes_to_stdout_and_tool_lines_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = render(
        capsys,
        {"kind": "status", "status": "running"},
        {"kind": "tool_call", "call_id": "c1", "tool": "fs-read", "summary": "read a.txt",
         "arguments": {"path": "a.txt"}},
        {"kind": "tool_result", "call_id": "c1", "tool": "fs-read", "status": "ok",
         "content": "1\talpha"},
        {"kind": "text", "text": "It says "},
        {"kind": "text", "text": "alpha."},
    )  # fmt: skip

    assert out == "It says alpha.\n"
    assert err.splitlines() == ["  → fs-read: read a.txt", "  ✓ fs-read"]


def test_results_pair_with_their_calls_by_id_not_by_order(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, err = render(
        capsys,
        {"kind": "tool_call", "call_id": "c1", "tool": "fs-read", "summary": "read a"},
        {"kind": "tool_call", "call_id": "c2", "tool": "index-grep", "summary": "grep x"},
        {"kind": "tool_result", "call_id": "c2", "tool": "index-grep", "status": "error",
         "content": "bad regex: (\nmore detail"},
        {"kind": "tool_result", "call_id": "c1", "tool": "fs-read", "status": "ok", "content": ""},
    )  # fmt: skip

    assert err.splitlines()[2:] == ["  ✗ index-grep: bad regex: (", "  ✓ fs-read"]


def test_approvals_and_final_statuses_are_short_lines(capsys: pytest.CaptureFixture[str]) -> None:
    _, err = render(
        capsys,
        {"kind": "approval", "call_id": "c1", "tool": "command", "summary": "run make",
         "decision": "pending"},
        {"kind": "status", "status": "stopped", "detail": "the outcome says why"},
        {"kind": "status", "status": "error", "detail": "the outcome says why"},
        {"kind": "status", "status": "retrying", "detail": "in 2 s"},
        {"kind": "status", "status": "done"},
    )  # fmt: skip

    assert err.splitlines() == [
        "  ? pending: command: run make",
        "  · stopped",
        "  · retrying: in 2 s",
    ]


@pytest.mark.parametrize(
    ("status", "code"),
    [("done", 0), ("error", 1), ("stopped", 1), ("awaiting_approval", 3), ("cancelled", 130)],
)
def test_outcome_exit_codes(capsys: pytest.CaptureFixture[str], status: str, code: int) -> None:
    assert Console().outcome({"session": "s1", "status": status}) == code
    assert capsys.readouterr().err.splitlines()[-1] == "session: s1"


def test_awaiting_approval_lists_the_calls_and_how_to_go_on(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pending = [{"call_id": "c1", "tool": "patch", "arguments": {}, "summary": "edit a.py"}]
    Console().outcome({"session": "s1", "status": "awaiting_approval", "pending": pending})

    err = capsys.readouterr().err
    assert "waiting for approval: patch: edit a.py" in err
    assert "tether ask --session s1" in err


def test_an_answer_that_did_not_stream_is_printed_whole(
    capsys: pytest.CaptureFixture[str],
) -> None:
    Console().outcome({"session": "s1", "status": "done", "answer": "whole"})
    assert capsys.readouterr().out == "whole\n"


def test_sessions_table_is_newest_first(capsys: pytest.CaptureFixture[str]) -> None:
    Console().sessions(
        [
            {"id": "old", "status": "done", "updated": "2026-01-01T10:00:00.000Z", "title": "a"},
            {"id": "new", "status": "error", "updated": "2026-02-01T10:00:00.000Z",
             "title": "two\nlines"},
        ],
        Path("/ws"),
    )  # fmt: skip

    header, first, second = capsys.readouterr().out.splitlines()
    assert header.split() == ["ID", "STATUS", "UPDATED", "TITLE"]
    assert first.startswith("new ") and first.endswith("two lines")
    assert second.startswith("old ")


async def test_a_question_without_a_terminal_is_left_pending(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert await Console().choose("Allow make?", ["Allow", "Allow always", "Deny"]) is None
    assert "left pending" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
async def test_a_question_is_answered_at_the_terminal(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pty

    controller, follower = pty.openpty()
    with os.fdopen(follower, "r") as tty:
        monkeypatch.setattr(sys, "stdin", tty)
        os.write(controller, b"nope\n3\n")
        chosen = await Console().choose("Allow make?", ["Allow", "Allow always", "Deny"])
    os.close(controller)

    assert chosen == 2
    assert "    3) Deny" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
async def test_a_question_taken_back_leaves_the_typed_line_to_the_next(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pty

    console = Console()
    controller, follower = pty.openpty()
    with os.fdopen(follower, "r") as tty:
        monkeypatch.setattr(sys, "stdin", tty)
        first = asyncio.create_task(console.choose("Allow make?", ["Allow", "Deny"]))
        async with asyncio.timeout(5):
            while console.reading is None:  # until the question reads the terminal
                await asyncio.sleep(0)
        first.cancel()  # the server sent $/cancelRequest: the turn was cancelled
        with pytest.raises(asyncio.CancelledError):
            await first
        second = asyncio.create_task(console.choose("Extend?", ["Extend", "Stop"]))
        os.write(controller, b"2\n")
        assert await asyncio.wait_for(second, 5) == 1
    os.close(controller)

    assert "taken back" in capsys.readouterr().err


def test_control_characters_from_the_model_are_shown_escaped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`touch x #\\x1b[2K\\recho hello` must not print as `echo hello`."""
    console = Console()
    console.update({"kind": "tool_call", "call_id": "c", "tool": "command",
                    "summary": "touch x #\x1b[2K\recho hello"})  # fmt: skip
    console.text("answer \x1b]0;title\x07 done\n")
    out, err = capsys.readouterr()
    assert "\x1b" not in err and "\r" not in err and "\\x1b[2K\\x0decho hello" in err
    assert out == "answer \\x1b]0;title\\x07 done\n"
