from __future__ import annotations

import itertools
import json
import zlib
from collections.abc import AsyncIterator, Iterable

import httpx
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tether.providers.body import PIECE, pieces
from tether.providers.failures import BrokenStream
from tether.providers.sse import (
    EVENT_LIMIT,
    LINE_LIMIT,
    EventStream,
    ServerSentEvent,
    SSEDecoder,
    aiter_sse,
    json_object,
)


async def _events(*lines: str) -> list[ServerSentEvent]:
    stream = EventStream()
    return [*stream.feed("".join(line + "\n" for line in lines).encode()), *stream.end()]


async def _events_from_bytes(*chunks: bytes) -> list[ServerSentEvent]:
    return [event async for event in aiter_sse(pieces(_streamed(chunks)))]


def _streamed(chunks: Iterable[bytes], headers: dict[str, str] | None = None) -> httpx.Response:
    async def body() -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    return httpx.Response(200, headers=headers, content=body())


async def test_multi_line_data_is_joined_with_newlines() -> None:
    events = await _events("data: first", "data: second", "", "data: third", "")
    assert [e.data for e in events] == ["first\nsecond", "third"]


async def test_comments_are_ignored_and_event_names_kept() -> None:
    events = await _events(": keep-alive", "event: message_start", "data: {}", "id: 7", "")
    assert events == [ServerSentEvent(event="message_start", data="{}", id="7")]


async def test_event_name_defaults_to_message_and_resets_between_events() -> None:
    events = await _events("event: ping", "data: a", "", "data: b", "")
    assert [(e.event, e.data) for e in events] == [("ping", "a"), ("message", "b")]


async def test_only_one_space_after_the_colon_is_stripped() -> None:
    events = await _events("data:no-space", "", "data:  two spaces", "", "data", "")
    assert [e.data for e in events] == ["no-space", " two spaces", ""]


async def test_an_event_without_data_is_not_dispatched() -> None:
    assert await _events("event: nothing", "", ": comment", "", "") == []


async def test_done_sentinel_is_left_to_the_caller() -> None:
    events = await _events("data: [DONE]", "")
    assert [e.data for e in events] == ["[DONE]"]


async def test_last_event_is_kept_when_the_stream_ends_without_a_blank_line() -> None:
    events = await _events("data: a", "", "data: tail")
    assert [e.data for e in events] == ["a", "tail"]


async def test_decoder_feeds_one_line_at_a_time() -> None:
    decoder = SSEDecoder()
    assert decoder.feed("data: x") is None
    assert decoder.feed("") == ServerSentEvent(data="x")
    assert decoder.flush() is None


async def test_bytes_split_anywhere_and_any_line_ending_parse_alike() -> None:
    events = await _events_from_bytes(
        b"\xef\xbb\xbfda",
        b"ta: caf\xc3",
        b"\xa9\r",
        b"\n\r\ndata: two\rdata: lines\r\r",
        b"data: three\n",
        b"\n",
    )
    assert [e.data for e in events] == ["café", "two\nlines", "three"]


def test_every_split_of_a_body_gives_its_events() -> None:
    """Pieces of whole LF lines take a fast way through (split in C), any other piece
    (a CR in it, a line left open before it) the general one: both, and every passage
    between them, give the events the body gives whole."""
    body = (
        b"data: one\n\nevent: e\ndata: two\ndata: lines\ndata: and three\n\n"
        b"data: caf\xc3\xa9\r\n\r\ndata: cr\r\rid: 7\ndata: last\n\n"
        b"event: f\ndata: named\n\ndata: \n\n"
    )
    whole = EventStream()
    expected = [*whole.feed(body), *whole.end()]
    assert [e.data for e in expected] == [
        "one",
        "two\nlines\nand three",
        "café",
        "cr",
        "last",
        "named",
        "",
    ]
    assert expected[1].event == "e" and expected[4].id == "7"
    assert expected[5].event == "f" and expected[5].id == expected[6].id == "7"
    for a, b in itertools.combinations(range(len(body) + 1), 2):
        stream = EventStream()
        got = [e for piece in (body[:a], body[a:b], body[b:]) for e in stream.feed(piece)]
        assert [*got, *stream.end()] == expected, (a, b)


async def test_a_line_that_is_no_sse_field_is_reported_not_skipped() -> None:
    assert [e.data for e in await _events("retry: 3000", "data: kept", "")] == ["kept"]
    with pytest.raises(BrokenStream) as caught:
        await _events("data: a", "", 'error: {"code": 500}', "")
    assert (
        str(caught.value) == "sent a line that is not a server-sent event: 'error: {\"code\": 500}'"
    )


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def _read_by_json_loads(data: str) -> object:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):
        return "unreadable"
    return value if isinstance(value, dict) else "unreadable"


def _read_by_json_object(data: str) -> object:
    try:
        return json_object(data)
    except BrokenStream:
        return "unreadable"


@given(
    st.one_of(
        _JSON.map(json.dumps),
        st.builds(lambda v, cut: json.dumps(v)[:cut], _JSON, st.integers(0, 200)),
        st.builds(
            lambda v, at, c: (t := json.dumps(v))[:at] + c + t[at:],
            _JSON,
            st.integers(0, 200),
            st.text(max_size=3),
        ),
        st.text(max_size=40),
    )
)
@example('{"a": "\\ud800"}')  # a lone surrogate: pydantic-core refuses it, json reads it
@example("[" * 500 + "]" * 500)  # past pydantic-core's nesting, within json's
@example('{"a": NaN, "b": -Infinity, "c": 1e400, "d": 123456789012345678901234567890}')
@example('{"a": 1, "a": 2}')
@example('\ufeff{"a": 1}')
@example('{"a":\f1}')
def test_json_object_reads_what_json_loads_reads(data: str) -> None:
    """The chunk is read by pydantic-core's parser, and again by ``json.loads`` where it
    refuses: so whatever a provider sends reads as the standard library reads it."""
    expected, got = _read_by_json_loads(data), _read_by_json_object(data)
    assert repr(got) == repr(expected)  # repr: NaN is not equal to itself


def test_json_object_names_what_came_instead() -> None:
    assert json_object('{"a": 1}') == {"a": 1}
    for bad in ('{"a": ', "[1, 2]", "null"):
        with pytest.raises(BrokenStream, match="unreadable chunk"):
            json_object(bad)


async def test_a_line_past_the_line_limit_stops_the_stream() -> None:
    # Ends after twice the limit: a decoder without one would end with an event.
    body = itertools.chain([b"data: "], itertools.repeat(b"x" * PIECE, 2 * LINE_LIMIT // PIECE))
    with pytest.raises(BrokenStream) as caught:
        await _events_from_bytes(*body)
    assert str(caught.value) == "sent a line longer than 8 MiB, past tether's line limit"


async def test_a_line_at_the_line_limit_is_read() -> None:
    line = b"data: " + b"x" * (LINE_LIMIT - 6)
    events = await _events_from_bytes(line[: LINE_LIMIT // 2], line[LINE_LIMIT // 2 :], b"\r\n\r\n")
    assert [len(e.data) for e in events] == [LINE_LIMIT - 6]


async def test_an_event_of_endless_short_lines_stops_at_the_event_limit() -> None:
    line = b"data: " + b"y" * 4090 + b"\n"
    with pytest.raises(BrokenStream) as caught:
        await _events_from_bytes(*itertools.repeat(line, 2 * EVENT_LIMIT // len(line)))
    assert str(caught.value) == (
        "sent an event of more than 8,388,608 characters, past tether's event limit"
    )


async def test_many_events_are_not_one_event() -> None:
    event = b"data: " + b"y" * 4090 + b"\n\n"
    count = 2 * EVENT_LIMIT // len(event)
    seen = 0
    async for _ in aiter_sse(pieces(_streamed(itertools.repeat(event, count)))):
        seen += 1
    assert seen == count


@pytest.mark.parametrize("coding", ["gzip", "deflate", "raw deflate"])
async def test_a_compressed_body_is_inflated_a_bounded_piece_at_a_time(coding: str) -> None:
    wbits = {"gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS, "raw deflate": -15}[coding]
    deflater = zlib.compressobj(9, zlib.DEFLATED, wbits)
    size = 64 * 2**20  # some 64 KiB on the wire
    compressed = deflater.compress(b"z" * size) + deflater.flush()
    header = {"content-encoding": coding.removeprefix("raw ")}
    inflated = [len(p) async for p in pieces(_streamed([compressed], header))]
    assert len(compressed) < PIECE * 2 and sum(inflated) == size
    assert max(inflated) == PIECE
