"""The terminal transcript: what ``tether ask`` prints for each update and outcome."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys

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


def test_approvals_are_short_lines_and_a_turns_end_is_left_to_its_outcome(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _, err = render(
        capsys,
        {"kind": "approval", "call_id": "c1", "tool": "command", "summary": "run make",
         "decision": "pending"},
        {"kind": "approval", "call_id": "c1", "tool": "command", "summary": "run make",
         "decision": "allowed"},
        {"kind": "status", "status": "retrying", "detail": "in 2 s"},
        {"kind": "status", "status": "stopped", "detail": "the outcome says why"},
        {"kind": "status", "status": "error", "detail": "the outcome says why"},
        {"kind": "status", "status": "done"},
        {"kind": "usage", "input_tokens": 10, "output_tokens": 2, "context_tokens": 12,
         "context_window": 100},
    )  # fmt: skip

    # "pending" is said by the dialog or the outcome's list that follows it.
    assert err.splitlines() == ["  ✓ allowed: command: run make", "  · retrying: in 2 s"]


def test_a_denial_is_one_line_with_its_reason(capsys: pytest.CaptureFixture[str]) -> None:
    _, err = render(
        capsys,
        {"kind": "tool_call", "call_id": "c1", "tool": "command", "summary": "rm -rf build"},
        {"kind": "approval", "call_id": "c1", "tool": "command", "summary": "rm -rf build",
         "decision": "pending"},
        {"kind": "approval", "call_id": "c1", "tool": "command", "summary": "rm -rf build",
         "decision": "denied"},
        {"kind": "tool_result", "call_id": "c1", "tool": "command", "status": "denied",
         "content": "denied: not today"},
    )  # fmt: skip

    assert err.splitlines() == [
        "  → command: rm -rf build",
        "  ✗ denied: command: rm -rf build (not today)",
    ]


@pytest.mark.parametrize("status", ["awaiting_approval", "cancelled", "stopped"])
def test_an_outcome_that_is_no_answer_says_its_status(
    capsys: pytest.CaptureFixture[str], status: str
) -> None:
    Console().outcome({"session": "s1", "status": status})
    assert f"  · {status}" in capsys.readouterr().err.splitlines()


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


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
@pytest.mark.parametrize(
    ("typed", "titles", "chosen"),
    [
        (b"y\n", ["Allow", "Allow always", "Deny"], 0),
        (b"n\n", ["Allow", "Allow always", "Deny"], 2),
        (b"YES\n", ["Allow", "Deny"], 0),
        (b"no\n", ["Extend", "Stop"], 1),
        (b"allow always\n", ["Allow", "Allow always", "Deny"], 1),
        (b"maybe\n2\n", ["Allow", "Allow always", "Deny"], 1),
    ],
)
async def test_y_and_n_answer_as_well_as_numbers_and_titles(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    typed: bytes,
    titles: list[str],
    chosen: int,
) -> None:
    import pty

    controller, follower = pty.openpty()
    with os.fdopen(follower, "r") as tty:
        monkeypatch.setattr(sys, "stdin", tty)
        os.write(controller, typed)
        assert await Console().choose("Allow make?", titles) == chosen
    os.close(controller)
    assert f"choose 1-{len(titles)}, y or n" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform == "win32", reason="pty")
async def test_the_reason_for_a_denial_is_read_as_typed(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import pty

    console = Console()
    controller, follower = pty.openpty()
    with os.fdopen(follower, "r") as tty:
        monkeypatch.setattr(sys, "stdin", tty)
        os.write(controller, b"  Not Before Friday \n\n")
        assert await console.reason() == "Not Before Friday"
        assert await console.reason() is None  # Enter: no reason
    os.close(controller)
    assert "why?" in capsys.readouterr().err


async def test_no_reason_is_asked_without_a_terminal() -> None:
    assert await Console().reason() is None


def command_call(call_id: str = "c1") -> dict[str, object]:
    return {"kind": "tool_call", "call_id": call_id, "tool": "command", "summary": "pytest"}


def output(text: str, call_id: str = "c1") -> dict[str, object]:
    return {"kind": "output", "call_id": call_id, "text": text}


def result(status: str, content: str, call_id: str = "c1") -> dict[str, object]:
    return {"kind": "tool_result", "call_id": call_id, "tool": "command", "status": status,
            "content": content}  # fmt: skip


def test_a_commands_output_shows_line_by_line_as_it_comes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Not a terminal (a pipe, a log): each line once it has ended, then the result."""
    _, err = render(
        capsys,
        command_call(),
        output("collecting"),
        output(" ...\nE   ModuleNotFoundError: No module named 'x'\n1 err"),
        output("or\x1b[0m"),
        result("error", "exit code: 1\ncollecting ...\nE   ModuleNotFoundError: ...\n1 error"),
    )

    assert err.splitlines() == [
        "  → command: pytest",
        "    │ collecting ...",
        "    │ E   ModuleNotFoundError: No module named 'x'",
        "    │ 1 error\\x1b[0m",  # an unfinished last line, once the command ends; escaped
        "  ✗ command: exit code: 1",
    ]


def test_a_command_whose_output_did_not_stream_shows_the_tail_of_its_result(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = [f"line {n}" for n in range(1, 9)]
    _, err = render(capsys, command_call(), result("error", "\n".join(["exit code: 2", *lines])))

    assert err.splitlines() == [
        "  → command: pytest",
        "    │ … 3 more lines",
        *(f"    │ {line}" for line in lines[3:]),
        "  ✗ command: exit code: 2",
    ]


def screen(written: str) -> list[str]:
    """What a terminal shows after ``written``: text, newlines, and the two sequences the
    output window uses (``ESC [ n F``: up n lines, to their start; ``ESC [ J``: erase
    from the cursor to the end of the screen)."""
    rows, row = [""], 0
    for piece in re.split(r"(\x1b\[\d*F|\x1b\[J|\n)", written):
        if piece == "\n":
            row += 1
            rows += [""] * (row + 1 - len(rows))
        elif piece == "\x1b[J":
            rows[row:] = [""]
        elif piece.startswith("\x1b["):
            row -= int(piece[2:-1] or 1)
        else:
            rows[row] += piece
    return rows[:-1] if rows[-1] == "" else rows


def test_on_a_terminal_the_output_is_a_window_that_leaves_its_tail(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "get_terminal_size", lambda: os.terminal_size((30, 24)))
    console = Console()
    console.redraw = True  # as on a terminal (colour stays off: NO_COLOR, say)
    console.update({"session": "s1", **command_call()})
    for n in range(1, 8):
        console.update({"session": "s1", **output(f"line {n}\n")})
    console.update({"session": "s1", **output("a very long line that does not fit")})
    written = capsys.readouterr().err

    assert screen(written) == [
        "  → command: pytest",
        "    │ line 4",
        "    │ line 5",
        "    │ line 6",
        "    │ line 7",
        "    │ a very long line that …",  # cut to 29 columns: rows on screen are rows counted
    ]

    console.update({"session": "s1", **result("ok", "exit code: 0\n…")})
    console.note("  next")

    assert screen(written + capsys.readouterr().err) == [
        "  → command: pytest",
        "    │ … 3 more lines",
        "    │ line 4",
        "    │ line 5",
        "    │ line 6",
        "    │ line 7",
        "    │ a very long line that does not fit",
        "  ✓ command",
        "  next",
    ]
