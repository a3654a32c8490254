"""The loop: stream a reply, store it, answer its calls, until the model answers in words."""

from __future__ import annotations

from pathlib import Path

from tests.support.doubles import ScriptedProvider, reply
from tests.unit.agent.harness import Harness
from tether.errors import ProviderError
from tether.models import ToolMessage, UserMessage


async def test_loops_until_the_model_answers_in_words(tmp_path: Path) -> None:
    first = reply(("echo", {"value": "a"}))
    h = Harness(tmp_path, ScriptedProvider(first, reply(text="all done")))

    result = await h.run()

    assert result.status == "done" and result.answer == "all done"
    second = h.provider.requests[1].messages
    assert isinstance(second[-2], ToolMessage) and second[-2].result.content == "echo: a"


async def test_a_turn_stops_at_max_requests(tmp_path: Path) -> None:
    script = [reply(("echo", {"value": str(n)})) for n in range(5)]
    h = Harness(tmp_path, ScriptedProvider(*script), max_requests=3)

    result = await h.run()

    assert result.status == "stopped" and "max_requests (3)" in (result.error or "")
    assert len(h.provider.requests) == 3
    assert h.statuses(result.session) == ["ok"] * 3


async def test_a_bug_ends_the_turn_with_error_and_leaves_the_session_whole(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, ScriptedProvider(RuntimeError("a bug")))
    result = await h.run()
    assert result.status == "error" and "a bug" in (result.error or "")
    assert h.store.sessions.get(result.session).status == "error"


async def test_a_provider_failure_ends_the_turn_with_error_and_nothing_half_written(
    tmp_path: Path,
) -> None:
    h = Harness(tmp_path, ScriptedProvider(ProviderError("the provider said no")))
    result = await h.run()
    assert result.status == "error" and result.error == "the provider said no"
    assert h.store.transcript.load(result.session) == [UserMessage(content="go")]
