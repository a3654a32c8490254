"""Each way a provider fails on the wire, against a real loopback stub of each API
(OpenAI Chat Completions and Anthropic Messages) where the fault applies to both.

What holds for every fault: a broken stream never becomes a ``Reply``; what is
retryable is retried only while nothing was shown; the rest is a ``ProviderError``
that says what happened, in the provider's own words where it gave any, and never
shows the key. The policy's arithmetic is in ``test_retry_policy.py``; what a turn
makes of these errors, over LSP, in ``tests/e2e/test_provider_faults.py``.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.unit.providers.wires import ASK, KEY, Wire, closed_port, texts
from tether.errors import ConfigError
from tether.providers import make_provider
from tether.providers.base import TextDelta

# -- retried, then answered ---------------------------------------------------


async def test_rate_limited_and_overloaded_are_retried_as_retry_after_says(wire: Wire) -> None:
    api = wire.api
    wire.stub.script(api.error(429, retry_after=0), api.error(529, retry_after=0), api.text("ok"))
    started = time.monotonic()
    events = await wire.collect(retry_base_s=30)  # without Retry-After: 15 s or more
    assert time.monotonic() - started < 2
    assert texts(events) == (["ok"], "ok")
    assert len(wire.stub.requests) == 3
    assert wire.stub.requests[0] == wire.stub.requests[2]


async def test_retry_after_is_capped_by_retry_max_s(wire: Wire) -> None:
    wire.stub.script(wire.api.error(503, retry_after=60), wire.api.text("ok"))
    started = time.monotonic()
    events = await wire.collect(retry_max_s=0.05)
    assert time.monotonic() - started < 2
    assert texts(events) == (["ok"], "ok")
    assert len(wire.stub.requests) == 2


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529])
async def test_server_errors_are_retried(wire: Wire, status: int) -> None:
    wire.stub.script(wire.api.error(status), wire.api.text("ok"))
    assert texts(await wire.collect()) == (["ok"], "ok")
    assert len(wire.stub.requests) == 2


@pytest.mark.parametrize("where", ["before the response", "after the first events"])
async def test_a_connection_dropped_before_any_text_is_retried(wire: Wire, where: str) -> None:
    api = wire.api
    dropped = api.hang_up() if where == "before the response" else api.drop_after(wire.before_text)
    wire.stub.script(dropped, api.text("whole"))
    assert texts(await wire.collect()) == (["whol", "e"], "whole")
    assert len(wire.stub.requests) == 2


@pytest.mark.parametrize("wire", ["anthropic"], indirect=True)
async def test_an_overloaded_error_event_before_any_text_is_retried(wire: Wire) -> None:
    wire.stub.script(wire.api.error_event("overloaded_error"), wire.api.text("ok"))
    assert texts(await wire.collect()) == (["ok"], "ok")
    assert len(wire.stub.requests) == 2


# -- retried until the retries run out -------------------------------------------


async def test_a_provider_that_keeps_failing_fails_after_every_attempt_with_its_own_words(
    wire: Wire,
) -> None:
    wire.stub.script(*[wire.api.error(500, "the engine is overloaded")] * 3)
    _, message = await wire.run()
    assert message == (
        f"the model provider answered HTTP 500 for {wire.endpoint} after 3 attempts: "
        "the engine is overloaded"
    )
    assert len(wire.stub.requests) == 3


async def test_a_connection_that_keeps_dropping_fails_after_every_attempt(wire: Wire) -> None:
    wire.stub.script(*[wire.api.hang_up()] * 3)
    _, message = await wire.run()
    assert message.startswith(
        f"the connection to the model provider at {wire.endpoint} failed after 3 attempts ("
    )
    assert len(wire.stub.requests) == 3


async def test_connection_refused_is_retried_then_names_the_url_and_the_variable(
    wire: Wire,
) -> None:
    base = f"http://127.0.0.1:{closed_port()}{wire.stub.base_path}"
    _, message = await wire.run(base_url=base)
    assert f"could not reach the model provider at {base}{wire.path} after 3 attempts" in message
    assert "Set TETHER_BASE_URL to its address, e.g. http://127.0.0.1:11434/v1" in message


async def test_credentials_in_the_base_url_are_not_shown(wire: Wire) -> None:
    port = closed_port()
    _, message = await wire.run(base_url=f"http://user:hunter2@127.0.0.1:{port}")
    assert f"could not reach the model provider at http://127.0.0.1:{port}/" in message
    assert "hunter2" not in message and "user@" not in message


async def test_a_provider_that_goes_away_mid_answer_is_reported(wire: Wire) -> None:
    endpoint = wire.endpoint  # the stub has no address once stopped
    wire.stub.script(wire.api.hang(30))
    failing = asyncio.create_task(wire.run())
    await wire.stub.wait_for_requests_async(1)
    started = time.monotonic()
    wire.stub.stop()  # the hanging answer must not hold the stop up
    assert time.monotonic() - started < 1
    _, message = await asyncio.wait_for(failing, timeout=5)
    assert f"could not reach the model provider at {endpoint} after 3 attempts" in message
    assert "TETHER_BASE_URL" in message


# -- not retried ---------------------------------------------------------------


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_failure_is_not_retried_and_names_the_key_variables(
    wire: Wire, status: int
) -> None:
    wire.stub.script(wire.api.error(status, "Incorrect API key provided"))
    _, message = await wire.run()
    assert message == (
        f"the model provider answered HTTP {status} for {wire.endpoint}: "
        f"Incorrect API key provided; check TETHER_API_KEY (or {wire.key_variable})"
    )
    assert len(wire.stub.requests) == 1


async def test_a_bad_request_is_not_retried(wire: Wire) -> None:
    wire.stub.script(wire.api.error(400, "max_tokens: must be at most 4096"))
    _, message = await wire.run()
    assert "HTTP 400" in message and "max_tokens: must be at most 4096" in message
    assert len(wire.stub.requests) == 1


async def test_a_key_echoed_by_the_provider_is_redacted(wire: Wire) -> None:
    wire.stub.script(wire.api.error(400, f"bad key {KEY} given"))
    _, message = await wire.run()
    assert message == f"the model provider answered HTTP 400 for {wire.endpoint}: bad key *** given"


async def test_a_connection_dropped_after_text_is_an_error_not_half_a_reply(wire: Wire) -> None:
    wire.stub.script(wire.api.drop_after(wire.before_text + 2), wire.api.text("never"))
    seen, message = await wire.run()
    assert seen == [TextDelta(text="p"), TextDelta(text="a")]
    assert f"the connection to the model provider at {wire.endpoint} broke mid-reply" in message
    assert message.endswith("; the partial reply was not kept")
    assert len(wire.stub.requests) == 1


async def test_a_chunk_that_is_not_json_is_a_clear_error(wire: Wire) -> None:
    wire.stub.script(wire.api.garbage(), wire.api.text("never"))
    seen, message = await wire.run()
    assert seen == []
    assert f"the model provider at {wire.endpoint} sent an unreadable chunk: " in message
    assert len(wire.stub.requests) == 1


async def test_a_body_that_is_not_server_sent_events_is_a_clear_error(wire: Wire) -> None:
    wire.stub.script(wire.api.garbage("<html><body>502 Bad Gateway</body></html>\n"))
    _, message = await wire.run()
    assert message == (
        f"the model provider at {wire.endpoint} sent a line that is not a server-sent event: "
        "'<html><body>502 Bad Gateway</body></html>'"
    )
    assert len(wire.stub.requests) == 1


@pytest.mark.parametrize("when", ["before any text", "after some text"])
async def test_a_provider_that_goes_quiet_hits_the_read_timeout(wire: Wire, when: str) -> None:
    quiet = wire.api.hang(5) if when == "before any text" else wire.api.stall(5)
    wire.stub.script(quiet, wire.api.text("never"))
    started = time.monotonic()
    seen, message = await wire.run(timeout_s=0.2)
    assert time.monotonic() - started < 2
    assert f"the model provider at {wire.endpoint} went 0.2 s without a word" in message
    assert "raise tether.provider.timeout_s" in message
    if when == "before any text":
        assert seen == [] and "partial" not in message
    else:
        assert seen == [TextDelta(text="stal")]
        assert message.endswith("; the partial reply was not kept")
    assert len(wire.stub.requests) == 1


async def test_a_reply_cut_off_inside_a_tool_call_is_never_a_call(wire: Wire) -> None:
    wire.stub.script(wire.api.cut_off_in_tool_call(text="Editing."))
    seen, message = await wire.run()
    assert seen == [TextDelta(text="Edit"), TextDelta(text="ing.")]
    assert message.startswith(
        f"the model provider at {wire.endpoint} cut the reply off at its token limit "
        "in the middle of a call to 'edit_file', so nothing was run; "
    )
    assert wire.cut_off_hint in message
    assert len(wire.stub.requests) == 1


async def test_an_error_event_mid_stream_fails_at_once_with_its_message(wire: Wire) -> None:
    wire.stub.script(wire.api.error_event("invalid_request_error", "prompt is too long"))
    seen, message = await wire.run()
    assert seen == []
    assert message == f"the model provider at {wire.endpoint} failed mid-reply: prompt is too long"
    assert len(wire.stub.requests) == 1


async def test_no_model_is_a_config_error_before_any_request(wire: Wire) -> None:
    provider = make_provider(wire.settings(model=None))
    with pytest.raises(ConfigError, match="set TETHER_MODEL"):
        [event async for event in provider.stream(ASK)]
    await provider.aclose()
    assert wire.stub.requests == []
