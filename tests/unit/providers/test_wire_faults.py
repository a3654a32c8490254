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
import json
import time

import pytest

from tests.support import stub_faults
from tests.support.loopback import Exchange, Scripted
from tests.unit.providers.wires import ASK, KEY, Wire, closed_port, texts
from tether.errors import ConfigError, ProviderError
from tether.models import MAX_TOKENS, Reply, Usage
from tether.providers import make_provider
from tether.providers.base import StreamEvent, TextDelta

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


async def test_connection_refused_on_this_machine_fails_at_once_and_names_the_url(
    wire: Wire,
) -> None:
    """Nothing listens there (Ollama not started, a wrong port): retrying cannot help, and a
    person should not wait seconds to learn it."""
    base = f"http://127.0.0.1:{closed_port()}{wire.stub.base_path}"
    _, message = await wire.run(base_url=base)
    assert f"could not reach the model provider at {base}{wire.path}" in message
    assert "after 3 attempts" not in message
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
    # The second attempt finds nothing listening on this machine: no third one.
    assert f"could not reach the model provider at {endpoint} after 2 attempts" in message
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


# -- found by the provider chaos campaign (tests/reliability/chaos.py) -------------------

DEEP = b"[" * 100_000  # nested past the JSON decoder's stack
WHOLE_WITH_USAGE = {  # a whole reply, "ok", whose token counts are %(in)s and %(out)s
    "openai": b'data: {"choices":[{"delta":{"content":"ok"},"finish_reason":"stop"}]}\n\n'
    b'data: {"choices":[],"usage":{"prompt_tokens":%(in)s,"completion_tokens":%(out)s}}\n\n'
    b"data: [DONE]\n\n",
    "anthropic": b'event: message_start\ndata: {"type":"message_start",'
    b'"message":{"usage":{"input_tokens":%(in)s}}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,'
    b'"delta":{"type":"text_delta","text":"ok"}}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},'
    b'"usage":{"output_tokens":%(out)s}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
}


async def test_a_chunk_nested_past_the_json_decoders_stack_is_unreadable_not_a_crash(
    wire: Wire,
) -> None:
    # Was a RecursionError out of the provider: "internal error: RecursionError(...)".
    wire.stub.script(stub_faults.raw_stream(b"data: " + DEEP + b"\n\n"))
    seen, message = await wire.run()
    assert seen == []
    assert message.startswith(f"the model provider at {wire.endpoint} sent an unreadable chunk: ")
    assert len(wire.stub.requests) == 1


async def test_an_error_body_nested_past_the_json_decoders_stack_is_shown_as_text(
    wire: Wire,
) -> None:
    # Was a RecursionError while reading the provider's words from a 5xx body.
    wire.stub.script(*[stub_faults.raw_error(503, DEEP)] * 3)
    _, message = await wire.run()
    assert message.startswith(
        f"the model provider answered HTTP 503 for {wire.endpoint} after 3 attempts: [[[["
    )
    assert len(wire.stub.requests) == 3


@pytest.mark.parametrize(
    "counts",
    [
        (b"1e400", b"1"),  # no integer holds it: was OverflowError, "internal error"
        (b"1e300", b"1"),  # an integer no SQLite column holds: the store's OverflowError
        (b"3", b"99999999999999999999"),
        (b"1000000001", b"1"),  # fits a column, but is no count: was stored and summed
        (b"1", b"9007199254740993"),  # past what a JSON number holds exactly
        (b'"many"', b"1"),  # was "a chunk of a shape tether does not know"
        (b"-5", b"1"),
        (b"2.5", b"1"),
    ],
)
async def test_token_counts_no_store_can_keep_are_taken_as_not_reported(
    wire: Wire, counts: tuple[bytes, bytes]
) -> None:
    body = WHOLE_WITH_USAGE[wire.kind] % {b"in": counts[0], b"out": counts[1]}
    wire.stub.script(stub_faults.raw_stream(body))
    *_, reply = await wire.collect()
    assert isinstance(reply, Reply) and reply.text == "ok"
    assert (
        reply.usage is None or reply.usage.input_tokens <= MAX_TOKENS >= reply.usage.output_tokens
    )
    assert reply.usage is None or reply.usage.input_tokens >= 0
    assert len(wire.stub.requests) == 1


async def test_token_counts_that_are_whole_numbers_are_kept(wire: Wire) -> None:
    body = WHOLE_WITH_USAGE[wire.kind] % {b"in": b"12.0", b"out": b'"3"'}
    wire.stub.script(stub_faults.raw_stream(body))
    *_, reply = await wire.collect()
    assert isinstance(reply, Reply) and reply.usage == Usage(input_tokens=12, output_tokens=3)


CALLS = (("fs-read", {"path": "notes.txt"}), ("outline", {"path": "code.py"}))


def stored_calls(events: list[StreamEvent]) -> list[tuple[str, str]]:
    reply = events[-1]
    assert isinstance(reply, Reply)
    return [(call.name, call.arguments) for call in reply.tool_calls]


@pytest.mark.parametrize("how", ["head after its first piece", "calls interleaved"])
async def test_tool_call_deltas_out_of_turn_still_make_each_call_whole(
    wire: Wire, how: str
) -> None:
    # Anthropic: an input_json_delta ahead of its block's start was dropped, so the call
    # reached the model with its arguments' head cut off (`: "code.py"}`).
    layout = wire.api.call_deltas(*CALLS)
    order = list(range(len(layout)))
    if how == "head after its first piece":
        head = max(at for at, d in enumerate(layout) if d.kind == "head")
        order[head], order[head + 1] = order[head + 1], order[head]
    else:
        first = [at for at, d in enumerate(layout) if d.call == 0]
        second = [at for at, d in enumerate(layout) if d.call == 1]
        order = [at for pair in zip(second, first, strict=False) for at in pair]
        order += first[len(second) :] + second[len(first) :]
    wire.stub.script(wire.api.tool_calls(*CALLS, order=tuple(order)))
    events = await wire.collect()
    assert stored_calls(events) == [(n, json.dumps(a)) for n, a in CALLS]


async def test_a_duplicated_tool_call_delta_never_makes_other_arguments(wire: Wire) -> None:
    layout = wire.api.call_deltas(*CALLS)
    for at, delta in enumerate(layout):
        order = (*range(at + 1), at, *range(at + 1, len(layout)))
        wire.stub.script(wire.api.tool_calls(*CALLS, order=order))
        calls = stored_calls(await wire.collect())
        assert [name for name, _ in calls] == [name for name, _ in CALLS]
        for (_, arguments), (_, sent) in zip(calls, CALLS, strict=True):
            if delta.kind != "arguments":
                assert json.loads(arguments) == sent
            elif arguments != json.dumps(sent):
                with pytest.raises(ValueError):
                    json.loads(arguments)


class Measured(Scripted):
    """Serves ``reply`` as it is, and notes how many bytes its answer took."""

    def __init__(self, reply: Scripted) -> None:
        self.reply = reply
        self.size = 0

    def serve(self, exchange: Exchange) -> None:
        whole = exchange.rendered(self.reply)
        self.size = len(whole)
        exchange.write_raw(whole)


async def test_a_connection_dropped_at_any_byte_is_the_whole_reply_or_an_error(
    wire: Wire,
) -> None:
    reply = wire.api.text("ok", chunk_size=1)
    measured = Measured(reply)
    wire.stub.script(measured)
    assert texts(await wire.collect()) == (["o", "k"], "ok")
    outcomes = []
    # Status line, headers, chunk framing, every event: each sixth byte, and each byte of
    # the end, where the last event and the body's end are.
    cuts = sorted({*range(0, measured.size, 6), *range(max(0, measured.size - 80), measured.size)})
    provider = make_provider(wire.settings(max_retries=0))
    for at in cuts:
        wire.stub.script(stub_faults.drop_at_byte(at, reply))
        try:
            events = [event async for event in provider.stream(ASK)]
        except ProviderError as exc:
            assert str(exc).startswith(
                (f"the connection to the model provider at {wire.endpoint} ",
                 f"the model provider at {wire.endpoint} ended the stream ")
            ), str(exc)  # fmt: skip
            outcomes.append("error")
        else:
            assert texts(events) == (["o", "k"], "ok")
            outcomes.append("whole")
    await provider.aclose()
    # Every cut before the reply's last event is an error; every one after it is whole.
    assert outcomes[0] == "error" and outcomes[-1] == "whole"
    assert outcomes == sorted(outcomes)
