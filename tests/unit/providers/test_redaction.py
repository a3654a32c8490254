"""The key never leaves in what the provider said: not in the retry warning (which goes
to stderr and, through the log handler, to the editor's window/logMessage), not in an
error, and not as a piece of itself where a message cuts the provider's words short.

A provider registers its key with ``tether.outbound.keep_secret`` when it is made; every
message built from the provider's words is redacted before it is cut.
"""

from __future__ import annotations

import json
import logging
import string
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.providers.wires import KEY, Wire, texts
from tether import outbound
from tether.config import ProviderSettings
from tether.outbound import FRAGMENT, keep_secret
from tether.providers.failures import (
    Failure,
    failed_mid_reply,
    not_an_event,
    provider_message,
    shown,
    unexpected_shape,
    unreadable,
)

RETRY_LOG = "tether.providers.retry"


def leaked(key: str, text: str) -> list[str]:
    """The pieces of ``key`` of ``FRAGMENT`` characters or more that ``text`` holds."""
    return [key[at : at + FRAGMENT] for at in range(len(key) - FRAGMENT + 1)
            if key[at : at + FRAGMENT] in text]  # fmt: skip


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == RETRY_LOG]


# -- over the wire -----------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 503])
async def test_the_retry_warning_says_why_without_the_key_the_provider_echoed(
    wire: Wire, status: int, caplog: pytest.LogCaptureFixture
) -> None:
    wire.stub.script(wire.api.error(status, f"bad key {KEY} given", retry_after=0))
    wire.stub.script(wire.api.text("ok"))
    with caplog.at_level(logging.WARNING, logger=RETRY_LOG):
        assert texts(await wire.collect()) == (["ok"], "ok")
    [warning] = warnings(caplog)
    assert warning.startswith(
        f"provider request to {wire.endpoint} failed (HTTP {status}: bad key *** given); "
        "retrying in "
    )
    assert leaked(KEY, warning) == []


@pytest.mark.parametrize("wire", ["anthropic"], indirect=True)
async def test_the_retry_warning_of_an_overloaded_event_does_not_hold_the_key(
    wire: Wire, caplog: pytest.LogCaptureFixture
) -> None:
    wire.stub.script(wire.api.error_event("overloaded_error", f"overloaded, key {KEY}"))
    wire.stub.script(wire.api.text("ok"))
    with caplog.at_level(logging.WARNING, logger=RETRY_LOG):
        assert texts(await wire.collect()) == (["ok"], "ok")
    [warning] = warnings(caplog)
    assert "(failed mid-reply: overloaded, key ***)" in warning
    assert leaked(KEY, warning) == []


@pytest.mark.parametrize("cut", [1, FRAGMENT, len(KEY) // 2, len(KEY) - 1])
async def test_a_key_cut_by_the_message_limit_leaves_no_piece_of_itself(
    wire: Wire, cut: int, caplog: pytest.LogCaptureFixture
) -> None:
    # The provider's words are cut at 500 characters: here, ``cut`` characters into the key.
    said = "x" * (500 - cut) + KEY + " was refused"
    wire.stub.script(wire.api.error(500, said, retry_after=0), wire.api.error(400, said))
    with caplog.at_level(logging.WARNING, logger=RETRY_LOG):
        _, message = await wire.run()
    assert message.startswith(f"the model provider answered HTTP 400 for {wire.endpoint}")
    [warning] = warnings(caplog)
    assert leaked(KEY, message) == [] and leaked(KEY, warning) == []
    # Redacted, then cut: the cut falls in the marker or after it, never in the key.
    assert message.endswith("x" * 20 + "*** was refused"[:cut])


# -- the messages, for any key and anything around it --------------------------------

FAILURE = Failure(
    ProviderSettings.model_validate({"kind": "openai", "base_url": "http://p.test/v1"}),
    httpx.URL("http://p.test/v1/chat/completions"),
)
# Each way the provider's words become a message, each with its own cut.
MESSAGES: dict[str, Callable[[str], str]] = {
    "JSON error body": lambda said: FAILURE.status(
        429, provider_message(json.dumps({"error": {"message": said}}).encode()), 3
    ),
    "plain error body": lambda said: FAILURE.status(502, provider_message(said.encode()), 1),
    "error body past the limit": lambda said: FAILURE.status(
        500, provider_message(said.encode(), True), 1
    ),
    "error event": lambda said: FAILURE.describe(failed_mid_reply(said), 1, yielded=True),
    "unreadable chunk": lambda said: FAILURE.describe(unreadable(said), 2, yielded=False),
    "not an event": lambda said: FAILURE.describe(not_an_event(said), 1, yielded=False),
    "odd shape": lambda said: FAILURE.describe(unexpected_shape(KeyError(said)), 1, False),
}

keys = st.text(string.ascii_letters + string.digits + "-_", min_size=FRAGMENT, max_size=80)


@st.composite
def said_around(draw: st.DrawFn, key: str) -> str:
    """Anything, with ``key`` in it at any offset up to just past the longest cut."""
    filler = draw(st.text(min_size=1, max_size=12))
    offset = draw(st.integers(0, 520))
    return (filler * offset)[:offset] + key + draw(st.text(max_size=40))


@contextmanager
def secret(key: str) -> Iterator[None]:
    """``key`` kept secret for one example only: hundreds of made-up keys kept for the
    rest of the run would redact other tests' text."""
    before = set(outbound._secrets)
    keep_secret(key)
    try:
        yield
    finally:
        outbound._secrets.intersection_update(before)


@given(key=keys, data=st.data())
def test_no_cut_leaves_a_piece_of_the_key(key: str, data: st.DataObject) -> None:
    said = data.draw(said_around(key))
    limit = data.draw(st.integers(0, len(said)))
    with secret(key):
        assert leaked(key, shown(said, limit)) == []


@given(key=keys, data=st.data(), how=st.sampled_from(sorted(MESSAGES)))
def test_no_message_holds_a_piece_of_the_key(key: str, data: st.DataObject, how: str) -> None:
    said = data.draw(said_around(key))
    with secret(key):
        message = MESSAGES[how](said)
    assert leaked(key, message) == []
    assert len(message) < 2500  # a repr of 200 characters can be ten times as long
