"""The retry policy's arithmetic: how long to wait before asking again.

What is retried, and what a person is told when retries run out, is proved over
the wire in ``test_wire_faults.py``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx

from tether.providers.retry import RetryPolicy, retry_after


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
