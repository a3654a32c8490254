"""When and how a provider request is tried again.

A streamed reply is retried only while nothing of it has reached the caller:
after the first event, a retry would show the person the same text twice.
What is retried: HTTP 429 and 5xx (honouring ``Retry-After``), a connection that
failed or dropped, and a ``BrokenStream`` its reader calls retryable.

Each retry is logged with the provider's reason, redacted like every message. A failed
request's body is read only as far as ``ERROR_BODY_LIMIT``; a failed stream's frames are
cleared, so what its reader had gathered is freed with it, not kept by the error.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import random
import traceback
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx

from tether.config import ProviderSettings
from tether.errors import ProviderError
from tether.outbound import outbound
from tether.providers.body import read_at_most
from tether.providers.failures import (
    ERROR_BODY_LIMIT,
    BrokenStream,
    Failure,
    provider_message,
    shown_url,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504, 529})
# Failures of the connection rather than of the request. A chat completion changes
# nothing on the provider, so sending it again is safe while nothing has been shown.
RETRY_TRANSPORT: tuple[type[httpx.HTTPError], ...] = (
    httpx.NetworkError,
    httpx.ConnectTimeout,
    httpx.RemoteProtocolError,
)


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    base_s: float = 1.0
    max_s: float = 30.0

    @classmethod
    def from_settings(cls, settings: ProviderSettings) -> RetryPolicy:
        return cls(settings.max_retries, settings.retry_base_s, settings.retry_max_s)

    def delay(self, retry: int, headers: httpx.Headers | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (0-based)."""
        asked = retry_after(headers) if headers is not None else None
        if asked is not None:
            return min(asked, self.max_s)
        # Half fixed, half random: clients that failed together spread out, and
        # none comes straight back. The exponent is clamped so a huge max_retries
        # cannot overflow a float.
        backoff = min(self.max_s, self.base_s * 2.0 ** min(retry, 32))
        return backoff / 2 + random.uniform(0, backoff / 2)


def retry_after(headers: httpx.Headers) -> float | None:
    """The wait the server asked for, in seconds, or None when it asked for none."""
    if (millis := headers.get("retry-after-ms")) is not None:
        try:
            return max(0.0, float(millis) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


async def stream_with_retries(
    client: httpx.AsyncClient,
    request: httpx.Request,
    consume: Callable[[httpx.Response], AsyncGenerator[T, None]],
    settings: ProviderSettings,
) -> AsyncIterator[T]:
    """Send ``request`` and yield what ``consume`` makes of the successful response.

    ``consume`` reports a broken stream with ``BrokenStream``; every failure leaves
    as ``ProviderError``.
    """
    policy = RetryPolicy.from_settings(settings)
    attempts = policy.max_retries + 1
    for attempt in range(1, attempts + 1):
        last = attempt == attempts
        yielded = False
        try:
            response = await client.send(request, stream=True)
            try:
                if response.is_success:
                    async with aclosing(consume(response)) as events:
                        async for event in events:
                            yielded = True
                            yield event
                    return
                code = response.status_code
                said = provider_message(*await read_at_most(response, ERROR_BODY_LIMIT))
                if last or code not in RETRY_STATUSES:
                    raise ProviderError(Failure(settings, request.url).status(code, said, attempt))
                wait = policy.delay(attempt - 1, response.headers)
                why = f"HTTP {code}: {said}" if said else f"HTTP {code}"
            finally:
                await response.aclose()
        except (BrokenStream, httpx.HTTPError) as exc:
            # The error outlives the stream; what its readers had gathered must not.
            traceback.clear_frames(exc.__traceback__)
            if yielded or last or not _retryable(exc) or _refused_nearby(exc, request):
                failure = Failure(settings, request.url)  # made when needed: 60 µs a request
                raise ProviderError(failure.describe(exc, attempt, yielded)) from exc
            wait, why = policy.delay(attempt - 1), outbound(str(exc) or type(exc).__name__)
        shown = shown_url(request.url)
        log.warning("provider request to %s failed (%s); retrying in %.2f s", shown, why, wait)
        await asyncio.sleep(wait)


def _refused_nearby(exc: BrokenStream | httpx.HTTPError, request: httpx.Request) -> bool:
    """A connection refused on this very machine: nothing listens there (Ollama is not
    started, the port is wrong), and waiting will not start it. Fail at once."""
    if not isinstance(exc, httpx.ConnectError) or not _caused_by(exc, ConnectionRefusedError):
        return False
    host = request.url.host
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _caused_by(exc: BaseException, kind: type[BaseException]) -> bool:
    seen: BaseException | None = exc
    for _ in range(10):  # the chain httpx -> httpcore -> OSError -> ConnectionRefusedError
        if seen is None:
            return False
        if isinstance(seen, kind):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _retryable(exc: BrokenStream | httpx.HTTPError) -> bool:
    if isinstance(exc, BrokenStream):
        return exc.retryable
    return isinstance(exc, RETRY_TRANSPORT)
