"""When and how a provider request is tried again, and what a person is told when it fails.

A streamed reply is retried only while nothing of it has reached the caller:
after the first event, a retry would show the person the same text twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import TypeVar

import httpx

from tether.config import ProviderSettings
from tether.errors import ProviderError

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
OLLAMA_HINT = "e.g. http://127.0.0.1:11434/v1 for Ollama"


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

    Every failure leaves as ``ProviderError``; ``consume`` may raise one itself.
    """
    policy = RetryPolicy.from_settings(settings)
    failure = _Failure(settings, request.url)
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
                await response.aread()
                if last or response.status_code not in RETRY_STATUSES:
                    raise ProviderError(failure.status(response, attempt))
                wait = policy.delay(attempt - 1, response.headers)
                why = f"HTTP {response.status_code}"
            finally:
                await response.aclose()
        except RETRY_TRANSPORT as exc:
            if yielded or last:
                raise ProviderError(failure.transport(exc, attempt)) from exc
            wait, why = policy.delay(attempt - 1), str(exc) or type(exc).__name__
        except httpx.HTTPError as exc:
            raise ProviderError(failure.transport(exc, attempt)) from exc
        except ProviderError as exc:
            # ``consume`` words its own errors; the key must stay out of those too.
            raise ProviderError(failure.redact(str(exc))) from exc.__cause__
        log.warning(
            "provider request to %s failed (%s); retrying in %.2f s", failure.url, why, wait
        )
        await asyncio.sleep(wait)


class _Failure:
    """Messages for a failed request that say what to do, and never show the key."""

    def __init__(self, settings: ProviderSettings, url: httpx.URL) -> None:
        self._key = settings.api_key.get_secret_value() if settings.api_key else ""
        fallback = "ANTHROPIC_API_KEY" if settings.kind == "anthropic" else "OPENAI_API_KEY"
        self._key_hint = f"check TETHER_API_KEY (or {fallback})"
        self._timeout_s = settings.timeout_s
        self.url = shown_url(url)

    def transport(self, exc: httpx.HTTPError, attempt: int) -> str:
        reason = str(exc) or type(exc).__name__
        tries = _tries(attempt)
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            text = (
                f"could not reach the model provider at {self.url}{tries} ({reason}); "
                f"is it running? Set TETHER_BASE_URL to its address, {OLLAMA_HINT}"
            )
        elif isinstance(exc, httpx.TimeoutException):
            text = (
                f"the model provider at {self.url} went {self._timeout_s:g} s without a word; "
                "it may be overloaded, or raise tether.provider.timeout_s for a slow local model"
            )
        else:
            text = f"the connection to the model provider at {self.url} failed{tries} ({reason})"
        return self.redact(text)

    def status(self, response: httpx.Response, attempt: int) -> str:
        code = response.status_code
        text = f"the model provider answered HTTP {code} for {self.url}{_tries(attempt)}"
        if said := provider_message(response):
            text += f": {said}"
        if code in (401, 403):
            text += f"; {self._key_hint}"
        elif code == 404:
            text += "; check TETHER_BASE_URL and TETHER_MODEL"
        return self.redact(text)

    def redact(self, text: str) -> str:
        # A misbehaving proxy may echo the key back in its error body.
        return text.replace(self._key, "***") if self._key else text


def shown_url(url: httpx.URL) -> str:
    """A URL fit for a message: credentials can ride in user info or a query, so drop both."""
    return str(url.copy_with(username=None, password=None, query=None))


def _tries(attempt: int) -> str:
    return f" after {attempt} attempts" if attempt > 1 else ""


def provider_message(response: httpx.Response) -> str:
    """The provider's own words from an error body, however it shapes them."""
    try:
        body = response.json()
    except (ValueError, UnicodeDecodeError):
        return response.text.strip()[:500]
    error = body.get("error", body) if isinstance(body, dict) else body
    if isinstance(error, dict):
        error = error.get("message") or error.get("detail") or json.dumps(error)
    return str(error).strip()[:500]
