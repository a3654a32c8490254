from __future__ import annotations

import asyncio
import socket
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest
from pydantic import SecretStr

from tests.support.provider_stub import ProviderStub, error, hang, text
from tether.config import ProviderSettings
from tether.errors import ProviderError
from tether.models import Reply, UserMessage
from tether.providers.base import ChatRequest, StreamEvent, TextDelta
from tether.providers.openai import OpenAIProvider
from tether.providers.retry import RetryPolicy, retry_after

KEY = "sk-test-retry-0123456789abcdef"
ASK = ChatRequest(system="", messages=(UserMessage(content="hi"),))


def settings(base_url: str, **overrides: object) -> ProviderSettings:
    values: dict[str, object] = {
        "base_url": base_url,
        "model": "stub-model",
        "api_key": SecretStr(KEY),
        "retry_base_s": 0.01,
        "max_retries": 2,
        "connect_timeout_s": 2,
    }
    return ProviderSettings.model_validate(values | overrides)


async def collect(config: ProviderSettings) -> list[StreamEvent]:
    provider = OpenAIProvider(config)
    try:
        return [event async for event in provider.stream(ASK)]
    finally:
        await provider.aclose()


async def failure(config: ProviderSettings) -> str:
    with pytest.raises(ProviderError) as caught:
        await collect(config)
    message = str(caught.value)
    assert KEY not in message
    return message


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- the policy ---------------------------------------------------------------


def test_backoff_doubles_with_jitter_and_is_capped() -> None:
    policy = RetryPolicy(max_retries=5, base_s=1.0, max_s=5.0)
    for retry, full in [(0, 1.0), (1, 2.0), (2, 4.0), (3, 5.0), (9, 5.0), (5000, 5.0)]:
        delays = {policy.delay(retry) for _ in range(50)}
        assert all(full / 2 <= d <= full for d in delays)
        assert len(delays) > 1


def test_retry_after_in_seconds_is_honoured_up_to_the_cap() -> None:
    policy = RetryPolicy(base_s=1.0, max_s=10.0)
    assert policy.delay(0, httpx.Headers({"Retry-After": "3"})) == 3.0
    assert policy.delay(0, httpx.Headers({"Retry-After": "0"})) == 0.0
    assert policy.delay(0, httpx.Headers({"Retry-After": "600"})) == 10.0


def test_retry_after_as_an_http_date() -> None:
    soon = format_datetime(datetime.now(UTC) + timedelta(seconds=20), usegmt=True)
    waited = retry_after(httpx.Headers({"Retry-After": soon}))
    assert waited is not None and 15 < waited <= 20
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=20), usegmt=True)
    assert retry_after(httpx.Headers({"Retry-After": past})) == 0.0


def test_retry_after_ms_wins_and_nonsense_is_ignored() -> None:
    assert retry_after(httpx.Headers({"retry-after-ms": "250", "retry-after": "9"})) == 0.25
    assert retry_after(httpx.Headers({"Retry-After": "soon"})) is None
    assert retry_after(httpx.Headers()) is None


# -- against the stub ----------------------------------------------------------


async def test_429_with_retry_after_zero_then_success(stub: ProviderStub) -> None:
    stub.script(error(429, "slow down", retry_after=0), text("ok"))
    started = time.monotonic()
    events = await collect(settings(stub.url, retry_base_s=30))
    assert time.monotonic() - started < 2
    assert isinstance(events[-1], Reply) and events[-1].text == "ok"
    assert len(stub.requests) == 2


async def test_retry_after_is_capped_by_retry_max_s(stub: ProviderStub) -> None:
    stub.script(error(503, retry_after=60), text("ok"))
    started = time.monotonic()
    await collect(settings(stub.url, retry_max_s=0.05))
    assert time.monotonic() - started < 2
    assert len(stub.requests) == 2


@pytest.mark.parametrize("status", [500, 502, 503, 504, 529])
async def test_server_errors_are_retried(stub: ProviderStub, status: int) -> None:
    stub.script(error(status), text("ok"))
    events = await collect(settings(stub.url))
    assert isinstance(events[-1], Reply) and events[-1].text == "ok"
    assert stub.pending() == 0


async def test_persistent_500_fails_after_every_attempt_with_the_providers_words(
    stub: ProviderStub,
) -> None:
    stub.script(*[error(500, "the engine is overloaded")] * 3)
    message = await failure(settings(stub.url, max_retries=2))
    assert len(stub.requests) == 3
    assert "HTTP 500" in message
    assert "the engine is overloaded" in message
    assert f"{stub.url}/chat/completions" in message
    assert "3 attempts" in message


@pytest.mark.parametrize("status", [401, 403])
async def test_auth_failure_is_not_retried_and_names_the_key_variable(
    stub: ProviderStub, status: int
) -> None:
    stub.script(error(status, "Incorrect API key provided"))
    message = await failure(settings(stub.url))
    assert len(stub.requests) == 1
    assert "Incorrect API key provided" in message
    assert "TETHER_API_KEY" in message and "OPENAI_API_KEY" in message


async def test_a_key_echoed_by_the_provider_is_redacted(stub: ProviderStub) -> None:
    stub.script(error(400, f"bad key {KEY} given"))
    message = await failure(settings(stub.url))
    assert "bad key *** given" in message


async def test_connection_refused_names_the_url_and_the_variable() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    message = await failure(settings(url))
    assert f"{url}/chat/completions" in message
    assert "TETHER_BASE_URL" in message
    assert "http://127.0.0.1:11434/v1" in message


async def test_credentials_in_the_base_url_are_not_shown() -> None:
    url = f"http://user:hunter2@127.0.0.1:{closed_port()}/v1"
    message = await failure(settings(url))
    assert "hunter2" not in message


async def test_a_dropped_connection_before_any_answer_is_retried() -> None:
    accepted: list[int] = []
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()

        def hang_up() -> None:
            # Read the request, then close without a word: a provider restarting.
            for _ in range(3):
                connection, _ = listener.accept()
                connection.recv(65536)
                connection.close()
                accepted.append(1)

        worker = threading.Thread(target=hang_up, daemon=True)
        worker.start()
        port = listener.getsockname()[1]
        message = await failure(settings(f"http://127.0.0.1:{port}/v1", max_retries=2))
        worker.join(timeout=2)
    assert len(accepted) == 3
    assert "after 3 attempts" in message
    assert f"127.0.0.1:{port}" in message


async def test_nothing_is_retried_once_text_has_reached_the_caller(stub: ProviderStub) -> None:
    stub.script(text("abcdefgh", chunk_size=1, delay_s=0.2), text("never"))
    provider = OpenAIProvider(settings(stub.url))
    seen: list[StreamEvent] = []
    with pytest.raises(ProviderError) as caught:
        async for event in provider.stream(ASK):
            seen.append(event)
            stub.stop()  # the provider goes away mid-reply
    await provider.aclose()
    assert seen == [TextDelta(text="a")]
    assert "could not reach" not in str(caught.value)
    assert len(stub.requests) == 1


async def test_a_provider_that_stops_answering_hits_the_read_timeout(stub: ProviderStub) -> None:
    stub.script(hang(5))
    started = time.monotonic()
    message = await failure(settings(stub.url, timeout_s=0.2))
    assert time.monotonic() - started < 2
    assert "0.2 s" in message and "timeout_s" in message
    assert len(stub.requests) == 1


async def test_a_provider_that_goes_away_during_a_hang_is_reported(stub: ProviderStub) -> None:
    stub.script(hang(30))
    task = asyncio.create_task(failure(settings(stub.url)))
    for _ in range(500):
        if stub.requests:
            break
        await asyncio.sleep(0.01)
    started = time.monotonic()
    stub.stop()
    assert time.monotonic() - started < 1
    message = await asyncio.wait_for(task, timeout=5)
    assert "could not reach" in message and "TETHER_BASE_URL" in message
