from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from tether.providers.failures import BrokenStream
from tether.providers.sse import ServerSentEvent, SSEDecoder, aiter_sse, iter_events, json_object


async def _lines(*lines: str) -> AsyncIterator[str]:
    for line in lines:
        yield line


async def _events(*lines: str) -> list[ServerSentEvent]:
    return [event async for event in iter_events(_lines(*lines))]


async def _events_from_bytes(*pieces: bytes) -> list[ServerSentEvent]:
    async def body() -> AsyncIterator[bytes]:
        for piece in pieces:
            yield piece

    response = httpx.Response(200, content=body())
    return [event async for event in aiter_sse(response)]


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


async def test_a_line_that_is_no_sse_field_is_reported_not_skipped() -> None:
    assert [e.data for e in await _events("retry: 3000", "data: kept", "")] == ["kept"]
    with pytest.raises(BrokenStream) as caught:
        await _events("data: a", "", 'error: {"code": 500}', "")
    assert (
        str(caught.value) == "sent a line that is not a server-sent event: 'error: {\"code\": 500}'"
    )


def test_json_object_names_what_came_instead() -> None:
    assert json_object('{"a": 1}') == {"a": 1}
    for bad in ('{"a": ', "[1, 2]", "null"):
        with pytest.raises(BrokenStream, match="unreadable chunk"):
            json_object(bad)
