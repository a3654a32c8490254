"""The harness's own expectations: what the stub takes for the person's prompt.

Found by the long crash campaign (seed 20261201, Anthropic wire, iteration 143): a fresh
``stream:next`` prompt on an idle session ended ``awaiting_approval``. The session's last
turn had been killed after its prompt was stored and before any reply; the Anthropic
wire's turns strictly alternate, so the server sent both prompts in one user turn, and
the stub read the two as one prompt, ``command:…``, and answered with a command (which
the editor, told nothing, dismissed). The server sent what the person said, in order, as
the Chat Completions wire does in two messages: the harness misread it.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import close
from tests.reliability import crash
from tests.reliability.harness import Wire, answering, last_user_text, start
from tests.support import anthropic_stub, provider_stub
from tests.support.loopback import Scripted
from tests.support.repositories import git_repository


def test_the_newest_prompt_is_read_where_the_anthropic_wire_merged_two() -> None:
    merged = [{"type": "text", "text": "command:m1"}, {"type": "text", "text": "stream:next"}]
    assert last_user_text([{"role": "user", "content": merged}]) == "stream:next"


def test_words_after_tool_results_are_read_and_results_alone_are_not() -> None:
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}
    words = {"type": "text", "text": "stream:next"}
    assert last_user_text([{"role": "user", "content": [result, words]}]) == "stream:next"
    assert last_user_text([{"role": "user", "content": [result]}]) is None
    assert last_user_text([{"role": "user", "content": "batch call"}]) == "batch call"
    assert last_user_text([{"role": "assistant", "content": "hi"}]) is None
    assert last_user_text([]) is None


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
async def test_a_prompt_after_a_turn_killed_before_its_reply_is_answered_as_itself(
    wire: Wire, tmp_path: Path
) -> None:
    """The crash campaign's scenario, made deterministic: the kill lands while the
    provider is asked about ``command:m1``; the next prompt, ``stream:next``, ends done."""

    def policy(messages: list[dict[str, Any]], system: str, wire: Wire) -> Scripted:
        if last_user_text(messages) == "command:m1" and wire == "anthropic":
            return anthropic_stub.hang(5)
        if last_user_text(messages) == "command:m1":
            return provider_stub.hang(5)
        return crash.policy(messages, system, wire)

    (tmp_path / "ws").mkdir()
    workspace = git_repository(tmp_path / "ws")
    with answering(wire, policy) as stub:
        editor = await start(workspace, stub, wire, tmp_path / "home")
        killed = asyncio.ensure_future(editor.run("command:m1"))
        await stub.wait_for_requests_async(1)
        editor.kill()
        killed.cancel()
        with contextlib.suppress(BaseException):
            await killed
        with contextlib.suppress(Exception):
            await editor.client.stop()
        editor = await start(workspace, stub, wire, tmp_path / "home")
        try:
            [session] = (await editor.command("tether.sessions", {}))["sessions"]
            result = await editor.run("stream:next", session["id"])
        finally:
            await close(editor)
    assert session["status"] == "interrupted"
    assert result["status"] == "done", result
