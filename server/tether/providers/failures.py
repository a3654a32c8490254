"""What a person is told when a provider fails: what happened, and what to set.

Every provider's failures are worded here, once. A reply reader that finds its
stream broken raises ``BrokenStream`` with the provider's part of the story;
``stream_with_retries`` retries it or turns it into ``ProviderError`` through
``Failure``, which adds the URL and the attempts.

The provider's own words (an error body, an unreadable chunk) may hold the key, echoed
by a proxy: ``shown`` redacts them with ``tether.outbound`` before cutting them short,
since a key cut at the boundary would be most of a key that no longer matches.
"""

from __future__ import annotations

import json

import httpx

from tether.config import OLLAMA_BASE_URL, ProviderSettings
from tether.outbound import outbound

PARTIAL_NOT_KEPT = "; the partial reply was not kept"
ERROR_BODY_LIMIT = 64 * 1024  # bytes of a failed request's body read for its message
SAID_LIMIT = 500  # characters of the provider's own words in a message


class BrokenStream(Exception):
    """A response that cannot become a reply.

    Its text is what the provider did, as a phrase that follows "the model provider
    at <url>": "sent an unreadable chunk: ...". ``retryable`` when asking again may
    help (the stream ended early, the provider was overloaded); it is retried only
    while nothing of the reply has reached the caller.
    """

    def __init__(self, what: str, *, retryable: bool = False) -> None:
        super().__init__(what)
        self.retryable = retryable


def ended_early() -> BrokenStream:
    return BrokenStream("ended the stream before the reply was complete", retryable=True)


def shown(said: object, limit: int = SAID_LIMIT) -> str:
    """The provider's words as a message may hold them: redacted, then cut to ``limit``."""
    return outbound(str(said))[:limit]


def unreadable(data: str) -> BrokenStream:
    return BrokenStream(f"sent an unreadable chunk: {shown(data, 200)!r}")


def not_an_event(line: str) -> BrokenStream:
    return BrokenStream(f"sent a line that is not a server-sent event: {shown(line, 200)!r}")


def unexpected_shape(exc: Exception) -> BrokenStream:
    return BrokenStream(f"sent a chunk of a shape tether does not know ({shown(exc)})")


def failed_mid_reply(said: object, *, retryable: bool = False) -> BrokenStream:
    return BrokenStream(f"failed mid-reply: {shown(said)}", retryable=retryable)


def cut_off(call: str, hint: str) -> BrokenStream:
    """The token limit ended the reply inside a tool call: its arguments are not whole."""
    return BrokenStream(
        f"cut the reply off at its token limit in the middle of a call to {shown(call, 200)!r}, "
        f"so nothing was run; {hint}"
    )


def over_limit(what: str) -> BrokenStream:
    """A stream that passed one of tether's size limits, which ``what`` names. It is
    stopped there and not retried: asking again would bring the same flood."""
    return BrokenStream(f"sent {what}")


def size(n: int) -> str:
    """A limit in bytes as a person reads it: 8 MiB, 64 KiB."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n:,} bytes"


def missing_model(settings: ProviderSettings) -> str:
    """What to set when no model is configured (raised as ``ConfigError``, before any request)."""
    text = (
        "no model configured: set TETHER_MODEL (or tether.provider.model in the editor's "
        "settings) to a model "
    )
    if settings.ollama_by_default():
        return text + (
            f"your local Ollama has pulled (with nothing else set, tether asks Ollama at "
            f"{OLLAMA_BASE_URL}); for a hosted model set OPENAI_API_KEY or ANTHROPIC_API_KEY too"
        )
    return text + "the provider serves"


class Failure:
    """Messages for one failed request that say what to do, and never show the key."""

    def __init__(self, settings: ProviderSettings, url: httpx.URL) -> None:
        fallback = "ANTHROPIC_API_KEY" if settings.kind == "anthropic" else "OPENAI_API_KEY"
        self._key_hint = f"check TETHER_API_KEY (or {fallback})"
        self._timeout_s = settings.timeout_s
        self._ollama_by_default = settings.ollama_by_default()
        self.url = shown_url(url)

    def describe(self, exc: BrokenStream | httpx.HTTPError, attempt: int, yielded: bool) -> str:
        """Why the reply failed; ``yielded`` when part of it had already been shown."""
        reason = str(exc) or type(exc).__name__
        if isinstance(exc, BrokenStream):
            text = f"the model provider at {self.url} {reason}"
            text += f" (tried {attempt} times)" if attempt > 1 else ""
        elif isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
            text = self._unreachable(reason, attempt)
        elif isinstance(exc, httpx.TimeoutException):
            text = (
                f"the model provider at {self.url} went {self._timeout_s:g} s without a word; "
                "it may be overloaded, or raise tether.provider.timeout_s for a slow local model"
            )
        elif yielded:
            text = f"the connection to the model provider at {self.url} broke mid-reply ({reason})"
        else:
            text = (
                f"the connection to the model provider at {self.url} failed{_tries(attempt)} "
                f"({reason})"
            )
        return outbound(text + (PARTIAL_NOT_KEPT if yielded else ""))

    def status(self, code: int, said: str, attempt: int) -> str:
        """An HTTP error; ``said`` is the provider's words from ``provider_message``."""
        text = f"the model provider answered HTTP {code} for {self.url}{_tries(attempt)}"
        if said:
            text += f": {said}"
        if code in (401, 403):
            text += f"; {self._key_hint}"
        elif code == 404:
            text += "; check TETHER_BASE_URL and TETHER_MODEL"
        return outbound(text)

    def _unreachable(self, reason: str, attempt: int) -> str:
        tries = _tries(attempt)
        if not self._ollama_by_default:
            return (
                f"could not reach the model provider at {self.url}{tries} ({reason}); "
                f"is it running? Set TETHER_BASE_URL to its address, "
                f"e.g. {OLLAMA_BASE_URL} for Ollama"
            )
        return (
            f"no model provider is configured, and no local Ollama answers at {self.url}{tries} "
            f"({reason}). To fix it, either start Ollama (`ollama serve`) and set TETHER_MODEL "
            "to a model it has pulled; or set OPENAI_API_KEY and TETHER_MODEL for OpenAI; "
            "or set ANTHROPIC_API_KEY and TETHER_MODEL for Anthropic. "
            "For any other endpoint, set TETHER_BASE_URL"
        )


def shown_url(url: httpx.URL) -> str:
    """A URL fit for a message: credentials can ride in user info or a query, so drop both."""
    return str(url.copy_with(username=None, password=None, query=None))


def _tries(attempt: int) -> str:
    return f" after {attempt} attempts" if attempt > 1 else ""


def provider_message(body: bytes, more: bool = False) -> str:
    """The provider's own words from an error body, however it shapes them, redacted and
    then cut short. ``more`` when the body went on past ``ERROR_BODY_LIMIT``, unread."""
    text = body.decode("utf-8", "replace")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested past the decoder's stack
        said = shown(text.strip())
    else:
        error = value.get("error", value) if isinstance(value, dict) else value
        if isinstance(error, dict):
            error = error.get("message") or error.get("detail") or json.dumps(error)
        said = shown(str(error).strip())
    if more:
        said += (
            f" (the error body passed tether's error body limit of {size(ERROR_BODY_LIMIT)} "
            "and was not read further)"
        )
    return said
