"""The terminal client's own logic, without a server: whose updates it shows, when a turn
has ended, the dialog's ``call_id``, and a denial's reason."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tether.terminal import client, wire
from tether.terminal.client import Terminal
from tether.terminal.wire import ActionItem


def update(session: str, **fields: Any) -> dict[str, Any]:
    return {"session": session, **fields}


async def test_only_this_sessions_updates_are_shown(capsys: pytest.CaptureFixture[str]) -> None:
    terminal = Terminal(Path("/ws"), debug=False)
    terminal.session = "mine"

    terminal.on_update(update("scheduled", kind="text", text="not mine "))
    terminal.on_update(update("mine", kind="text", text="mine"))
    terminal.on_update(update("scheduled", kind="tool_call", call_id="c9", tool="command",
                              summary="make deploy"))  # fmt: skip

    out, err = capsys.readouterr()
    assert out == "mine" and err == ""


async def test_updates_before_the_new_sessions_id_wait_for_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`tether.run` answers with the session, but the turn may speak first."""
    terminal = Terminal(Path("/ws"), debug=False)

    terminal.on_update(update("other", kind="text", text="theirs"))
    terminal.on_update(update("new", kind="text", text="ours"))
    assert capsys.readouterr().out == ""

    terminal.adopt("new")
    terminal.on_update(update("new", kind="text", text=", and on"))

    assert capsys.readouterr().out == "ours, and on"


async def test_the_status_update_with_the_result_ends_the_turn(
    capsys: pytest.CaptureFixture[str],
) -> None:
    terminal = Terminal(Path("/ws"), debug=False)
    terminal.session = "s1"
    terminal.ended = asyncio.get_running_loop().create_future()
    result = {"session": "s1", "status": "awaiting_approval", "pending": [{"call_id": "c1"}]}

    terminal.on_update(update("s1", kind="status", status="running"))
    assert not terminal.ended.done()
    terminal.on_update(update("s1", kind="status", status="awaiting_approval", result=result))

    assert terminal.ended.result() == result
    assert capsys.readouterr().err == ""  # the outcome says it, once


async def test_an_end_without_its_result_waits_a_moment_for_one_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(client, "RESULT_GRACE_S", 0.05)
    terminal = Terminal(Path("/ws"), debug=False)
    terminal.session = "s1"
    loop = asyncio.get_running_loop()

    terminal.ended = first = loop.create_future()
    terminal.on_update(update("s1", kind="status", status="cancelled"))
    assert await asyncio.wait_for(first, 5) == {"session": "s1", "status": "cancelled"}

    terminal.ended = second = loop.create_future()
    full = {"session": "s1", "status": "error", "error": "the whole story"}
    terminal.on_update(update("s1", kind="status", status="error", detail="short"))
    terminal.on_update(update("s1", kind="status", status="error", result=full))
    await asyncio.sleep(0.1)
    assert second.result() == full


def test_the_dialogs_call_id_is_kept_both_ways() -> None:
    converter = wire.converter()
    params = converter.structure(
        {"type": 2, "message": "run make?",
         "actions": [{"title": "Allow", "call_id": "c1"}, {"title": "Deny"}]},
        types.ShowMessageRequestParams,
    )  # fmt: skip

    allow, deny = params.actions or []
    assert allow == ActionItem(title="Allow", call_id="c1") and deny.title == "Deny"
    assert converter.unstructure(allow) == {"title": "Allow", "call_id": "c1"}
    assert converter.unstructure(deny) == {"title": "Deny"}


def dialog(*titles: str) -> types.ShowMessageRequestParams:
    actions = [ActionItem(title=title, call_id="c1") for title in titles]
    return types.ShowMessageRequestParams(types.MessageType.Warning, "run make?", actions)


def answering(terminal: Terminal, chosen: int | None, reason: str | None) -> None:
    async def choose(message: str, titles: list[str]) -> int | None:
        return chosen

    async def why() -> str | None:
        return reason

    terminal.console.choose = choose  # type: ignore[method-assign]
    terminal.console.reason = why  # type: ignore[method-assign]


async def test_a_denial_with_a_reason_parks_the_call_then_denies_it_with_the_reason() -> None:
    terminal = Terminal(Path("/ws"), debug=False)
    answering(terminal, chosen=2, reason="not before Friday")
    terminal.session = "s1"

    answer = await terminal.on_message_request(dialog("Allow", "Allow always", "Deny"))

    assert answer is None and terminal.denial == ("c1", "not before Friday")
    started: list[tuple[str, dict[str, Any]]] = []
    ends: list[dict[str, Any]] = [
        {"session": "s1", "status": "awaiting_approval", "pending": [{"call_id": "c1"}]},
        {"session": "s1", "status": "done", "answer": "left it"},
    ]

    async def turn(command: str, argument: dict[str, Any]) -> dict[str, Any]:
        started.append((command, argument))
        return ends.pop(0)

    terminal.turn = turn  # type: ignore[method-assign]
    assert await terminal.follow("tether.run", {"prompt": "make it"}) == 0
    assert started == [
        ("tether.run", {"prompt": "make it"}),
        ("tether.deny", {"session": "s1", "calls": ["c1"], "reason": "not before Friday"}),
    ]


@pytest.mark.parametrize(("chosen", "title"), [(0, "Allow"), (2, "Deny")])
async def test_other_answers_go_back_in_the_dialog(chosen: int, title: str) -> None:
    terminal = Terminal(Path("/ws"), debug=False)
    answering(terminal, chosen=chosen, reason=None)
    terminal.session = "s1"

    answer = await terminal.on_message_request(dialog("Allow", "Allow always", "Deny"))

    assert answer == ActionItem(title=title, call_id="c1") and terminal.denial is None
