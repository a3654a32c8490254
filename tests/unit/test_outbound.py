"""Text leaving the process: no secret survives a cut anywhere, nothing refuses to encode."""

from __future__ import annotations

import json
import logging

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.outbound import (
    _KEY_FIELDS,
    _KEY_WORDS,
    _LONE_SURROGATE,
    _ONE_PASS,
    FRAGMENT,
    RedactingFilter,
    _escape,
    _holds_a_key_word,
    _keep_field_name,
    escape_surrogates,
    keep_secret,
    outbound,
    outbound_json,
    redact,
)

KEY = "sk-proj-Zx81Qw7rTy2Ui9Op0As4Df6Gh3Jk5Lz"
keep_secret(KEY)


def fragments(text: str, secret: str = KEY) -> list[str]:
    """Every piece of ``secret`` of ``FRAGMENT`` characters or more still in ``text``."""
    return [
        secret[i : i + FRAGMENT]
        for i in range(len(secret) - FRAGMENT + 1)
        if secret[i : i + FRAGMENT] in text
    ]


@given(st.text(max_size=60), st.text(max_size=60), st.integers(0, 200), st.booleans())
def test_no_piece_of_the_key_survives_any_cut(
    before: str, after: str, cut: int, keep_head: bool
) -> None:
    """An error body quoting the key, cut at any point (as a message is shortened), then
    redacted, keeps no piece of it of FRAGMENT characters or more."""
    message = f"{before}{KEY}{after}"
    shortened = message[:cut] if keep_head else message[cut:]
    assert fragments(redact(shortened)) == []


@given(st.integers(0, len(KEY)))
def test_redacting_first_then_cutting_keeps_nothing_either(cut: int) -> None:
    message = f"HTTP 401: incorrect key {KEY} given"
    assert fragments(redact(message)[: len("HTTP 401: incorrect key ") + cut]) == []


def test_a_key_not_yet_known_is_redacted_where_it_stands() -> None:
    options = json.dumps({"tether": {"provider": {"api_key": "sk-unknown-1234567"}}})
    assert "sk-unknown" not in redact(options) and '"api_key": "***"' in redact(options)
    assert redact("Authorization: Bearer abcdefghijkl") == "Authorization: Bearer ***"


_FIELD_PIECES = [
    '"',
    "'",
    ":",
    " ",
    "=",
    "api",
    "_",
    "-",
    "key",
    "KEY",
    "token",
    "\u0131",
    "\u017f",
    "\u212a",
    "secret",
    "Secret",
    "\u017fecret",
    "passwor",
    "d",
    "author\u0131zation",
    "Authorization",
    "bearer",
    "Basic",
    "abcdefgh12",
    "x",
]


@given(st.lists(st.sampled_from(_FIELD_PIECES), max_size=12))
def test_the_quick_check_never_skips_a_field_the_pattern_redacts(pieces: list[str]) -> None:
    """Most texts skip the key-field pattern by a cheap check for its words; every text the
    pattern redacts must pass that check, whatever case folding makes it match."""
    text = "".join(pieces)
    assert redact(text) == _KEY_FIELDS.sub(_keep_field_name, text)


def test_a_key_field_in_any_case_the_pattern_folds_is_still_redacted() -> None:
    assert redact('"\u017fecret": "abcdefghijk"') == '"\u017fecret": "***"'  # long s
    assert redact('"api_\u212aey": "abcdefghijk"') == '"api_\u212aey": "***"'  # Kelvin sign
    dotless = "author\u0131zation: bearer abcdefghijk"
    assert redact(dotless) == "author\u0131zation: bearer ***"


@given(
    st.text(
        alphabet=st.characters(exclude_categories=()) | st.sampled_from("\udce9\ud800é"),
        max_size=40,
    )
)
def test_the_fast_paths_escape_exactly_what_the_pattern_finds(text: str) -> None:
    """ASCII, and text that encodes, are returned as they are; the rest as the pattern says."""
    assert escape_surrogates(text) == _LONE_SURROGATE.sub(_escape, text)


def test_lone_surrogates_are_shown_escaped_and_encode() -> None:
    name = b"caf\xe9.txt".decode("utf-8", "surrogateescape")
    assert escape_surrogates(name) == "caf\\xe9.txt"
    assert escape_surrogates("odd \ud800") == "odd \\ud800"
    outbound(name).encode("utf-8")


def test_json_values_are_cleaned_keys_and_all() -> None:
    value = {"a\udce9": [KEY, {"k": f"x{KEY}"}], "n": 1}
    assert json.dumps(outbound_json(value)).find(KEY[:FRAGMENT]) == -1
    assert outbound_json(value)["a\\xe9"][1] == {"k": "x***"}


def test_log_records_leave_redacted(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("tether.test_outbound")
    handler = caplog.handler
    handler.addFilter(RedactingFilter())
    try:
        logger.warning("provider said: %s", f"bad key {KEY[:30]}")
    finally:
        handler.removeFilter(handler.filters[-1])
    assert fragments(caplog.text) == [] and "provider said: bad key ***" in caplog.text


def test_two_keys_sharing_a_prefix_are_both_redacted_whole_or_cut() -> None:
    first, second = "sk-proj-aaaaaaaa11111111", "sk-proj-9f3c2a7e1b5d8c4a6e0f2b"
    keep_secret(first)
    keep_secret(second)
    for cut in range(len(second)):
        shown = redact(f"{first} then {second[cut:]}")
        assert fragments(shown, first) == [] and fragments(shown, second) == []


def test_a_short_text_made_safe_before_a_secret_was_known_is_redacted_after() -> None:
    """Short texts are kept as they were made safe; a new secret empties what is kept."""
    later = "gh-token-Ab12Cd34Ef56"
    text = f"key {later}"
    assert outbound(text) == text  # not a secret yet: kept as it is
    assert outbound(text) == text
    keep_secret(later)
    assert outbound(text) == "key ***"
    assert outbound_json({text: [text]}) == {"key ***": ["key ***"]}


def test_what_is_kept_of_short_texts_stays_bounded() -> None:
    from tether import outbound as module

    for n in range(2 * module._KNOWN_MAX):
        assert outbound(f"status {n}") == f"status {n}"
    assert len(module._known) <= module._KNOWN_MAX


@settings(max_examples=200, deadline=None)
@given(
    filler=st.text(alphabet="ak'\"ey tOKn€\u0131\ud800", min_size=1, max_size=60),
    word=st.sampled_from(["", *_KEY_WORDS, "key", "token ", "authorizatio"]),
    at=st.floats(min_value=0, max_value=1),
)
def test_a_long_text_is_searched_for_key_words_as_a_short_one_is(
    filler: str, word: str, at: float
) -> None:
    """Past a few KB the words are looked for in one RE2 pass: the same answer."""
    text = (filler * (5000 // max(len(filler), 1) + 1))[:5000]
    cut = int(at * len(text))
    folded = (text[:cut] + word + text[cut:]).casefold()
    assert len(folded) >= _ONE_PASS
    by_word = any(w in folded for w in _KEY_WORDS)
    assert _holds_a_key_word(folded) == by_word


def test_a_key_field_at_the_end_of_a_long_text_is_redacted() -> None:
    text = "x = 1\n" * 2000 + '{"api_key": "sk-abcdefgh12345678"}'
    assert redact(text).endswith('{"api_key": "***"}')


def test_a_long_text_holding_lone_surrogates_is_redacted_and_escaped() -> None:
    """A model's odd escapes reach the store: the one RE2 pass must take them too (the
    tool-fuzz campaign found a turn failing on 65,000 of them)."""
    text = "\ud800" * 5000 + '{"token": "abcdefgh12345678"}'
    assert outbound(text) == "\\ud800" * 5000 + '{"token": "***"}'
