"""Text leaving the process: the one function that makes it safe to show, send and keep.

``outbound`` redacts the secrets this process holds (the provider's API key) and
escapes lone surrogates (names that are not UTF-8, or a model's odd escapes), which
no JSON encoder, terminal or SQLite column would take. Every sink applies it, before
any cut: the log and ``window/logMessage``, ``tether/update``, JSON-RPC errors, the
store, tool results and what ``tether ask`` prints. Redacting before a cut matters: a
key cut at a boundary is still most of the key, so fragments of at least
``FRAGMENT`` characters from a secret's start or end are redacted too.
"""

from __future__ import annotations

import logging
import re
from functools import cache
from typing import Any

FRAGMENT = 8  # the shortest piece of a secret that is redacted on its own
REDACTED = "***"
_secrets: set[str] = set()
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# A key this process has not been told of yet (an editor's initializationOptions are
# logged before they are read): redacted by where it stands.
_KEY_FIELDS = re.compile(
    r"""(?ix)
    ( ["'](?:api[_-]?key|apikey|x-api-key|token|access[_-]token|password|secret)["'] \s*:\s* ["'] )
    ( [^"'\s]{8,} )
    | ( authorization ["']? \s* [:=] \s* ["']? (?:bearer|basic) \s+ ) ( [^"'\s,}]{8,} )
    """
)


# Short texts made safe already, by what they were: a JSON value's keys and its short
# values (a status, a tool's name, a session's id) come again and again, and each costs a
# redaction (a few µs) where a lookup costs a tenth of one. A new secret empties it.
_SHORT = 64
_KNOWN_MAX = 4096
_known: dict[str, str] = {}


def keep_secret(value: str | None) -> None:
    """Redact ``value`` from everything that leaves this process from now on."""
    if value and len(value) >= FRAGMENT:
        _secrets.add(value)
        _known.clear()


# One of these stands in every match of _KEY_FIELDS (a field's name ends in one and its
# quote), folded as its (?i) folds: a text without any, most tool results, source code
# too, skips that regex, 80 times the cost of this check.
_KEY_WORDS = (
    *(f"{word}{quote}" for word in ("key", "token", "password", "secret") for quote in "\"'"),
    "authorization",
)
# Past this many characters the words are looked for in one pass by RE2, not a pass a
# word: 80 KB of source (a file read whole) took 137 µs so, and 346 µs word by word.
_ONE_PASS = 4096


def redact(text: str) -> str:
    folded = text.casefold().replace("\u0131", "i")  # (?i) takes the dotless i for i
    if _holds_a_key_word(folded):
        text = _KEY_FIELDS.sub(_keep_field_name, text)
    # Every secret's spans are found on the same text, then cut out at once: redacting
    # one first could remove the start by which another's piece is recognised.
    spans = [
        span
        for secret in _secrets
        if secret[:FRAGMENT] in text or secret[-FRAGMENT:] in text
        for span in _spans(text, secret)
    ]
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    for start, end in reversed(merged):
        text = text[:start] + REDACTED + text[end:]
    return text


def _holds_a_key_word(folded: str) -> bool:
    if len(folded) < _ONE_PASS:
        return any(word in folded for word in _KEY_WORDS)
    # As UTF-8 bytes, lone surrogates kept (RE2's wrapper would refuse them in a str):
    # the words are ASCII, and no other character's bytes hold an ASCII byte.
    return _any_key_word().search(folded.encode("utf-8", "surrogatepass")) is not None


@cache
def _any_key_word() -> Any:
    # Imported at the first long text, not with this module: every process imports it
    # first thing, and RE2 takes 6 ms to load.
    import re2  # type: ignore[import-untyped]  # google-re2 ships no type information

    return re2.compile(b"|".join(re2.escape(word.encode()) for word in _KEY_WORDS))


def _spans(text: str, secret: str) -> list[tuple[int, int]]:
    """Where ``secret`` stands in ``text``, whole or as a piece cut at either end."""
    spans: list[tuple[int, int]] = []
    head, tail = secret[:FRAGMENT], secret[-FRAGMENT:]
    at = text.find(head)
    while at >= 0:  # the secret, or a piece of it cut at its end
        end = at + FRAGMENT
        while end - at < len(secret) and end < len(text) and text[end] == secret[end - at]:
            end += 1
        spans.append((at, end))
        at = text.find(head, at + 1)
    at = text.find(tail)
    while at >= 0:  # a piece cut at its start: walk back while it still matches
        start, k = at, len(secret) - FRAGMENT
        while k > 0 and start > 0 and text[start - 1] == secret[k - 1]:
            start, k = start - 1, k - 1
        spans.append((start, at + FRAGMENT))
        at = text.find(tail, at + 1)
    return spans


def _keep_field_name(match: re.Match[str]) -> str:
    return (match[1] or match[3]) + REDACTED


def escape_surrogates(text: str) -> str:
    r"""A lone surrogate as a visible escape: a name byte 0xE9 that is not UTF-8 (Python
    holds it as U+DCE9) is shown as ``\xe9``; any other as ``\udXXX``."""
    if text.isascii():  # the common case, and 1,000 times as fast as the search
        return text
    try:
        text.encode()  # fails on a lone surrogate only; 5 times as fast as the search
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(_escape, text)
    return text


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def outbound(text: str) -> str:
    if len(text) > _SHORT:
        return escape_surrogates(redact(text))
    if (safe := _known.get(text)) is None:
        safe = escape_surrogates(redact(text))
        if len(_known) < _KNOWN_MAX:
            _known[text] = safe
    return safe


def outbound_json(value: Any) -> Any:
    """``outbound`` applied to every string of a JSON-like value, keys included."""
    if isinstance(value, str):
        return outbound(value)
    if isinstance(value, dict):
        return {outbound_json(k): outbound_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [outbound_json(v) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """Applied to every log handler: a record's text leaves the process redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = outbound(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, ()
        if record.exc_info and record.exc_text is None and _secrets:
            # A traceback's text may quote the key too (an exception's message).
            record.exc_text = outbound(logging.Formatter().formatException(record.exc_info))
        return True
