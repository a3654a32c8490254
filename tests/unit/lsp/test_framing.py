"""LSP framing read with limits (``lsp/framing.py``): messages come back whole however the
stream is cut, bad frames are answered and skipped, and nothing is kept beyond a bound."""

from __future__ import annotations

import asyncio
import itertools
import json

from hypothesis import given
from hypothesis import strategies as st

from tether.lsp.framing import (
    CHUNK,
    MAX_HEADER_LINE,
    PARSE_ERROR,
    Frames,
    Rejected,
    decode,
    frame,
    request_id,
)


class Pieces:
    """A stream that arrives in the given pieces (each read returns at most one piece)."""

    def __init__(self, *pieces: bytes) -> None:
        self.pieces = [p for p in pieces if p]
        self.asked: list[int] = []

    async def read(self, n: int) -> bytes:
        self.asked.append(n)
        if not self.pieces:
            return b""
        piece = self.pieces.pop(0)
        if len(piece) > n:
            self.pieces.insert(0, piece[n:])
            piece = piece[:n]
        return piece


def read_all(frames: Frames) -> list[bytes | Rejected]:
    async def drain() -> list[bytes | Rejected]:
        found: list[bytes | Rejected] = []
        while (item := await frames.next()) is not None:
            found.append(item)
        return found

    return asyncio.run(drain())


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({0, len(data), *(p % (len(data) + 1) for p in points)})
    return [data[a:b] for a, b in itertools.pairwise(edges)]


BODIES = st.lists(st.binary(max_size=300), max_size=6)


@given(BODIES, st.lists(st.integers(0, 10_000), max_size=20))
def test_messages_come_back_whole_however_the_stream_is_cut(
    bodies: list[bytes], points: list[int]
) -> None:
    stream = b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(b), b) for b in bodies)

    assert read_all(Frames(Pieces(*cut(stream, points)))) == bodies


@given(BODIES, st.binary(max_size=200))
def test_after_a_header_without_a_length_and_its_body_the_next_messages_come_whole(
    bodies: list[bytes], junk: bytes
) -> None:
    junk = junk.replace(b"\n", b" ")  # a body of one line, as JSON-RPC bodies are
    stream = b"Content-Type: x\r\n\r\n" + junk
    stream += b"".join(b"Content-Length: %d\r\n\r\n%s" % (len(b), b) for b in bodies)

    found = read_all(Frames(Pieces(stream)))

    assert isinstance(found[0], Rejected) and "no Content-Length" in found[0].message
    assert found[1:] == bodies


def test_headers_are_read_in_any_case_with_any_spacing_and_other_headers_ignored() -> None:
    stream = b"content-length:2\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n{}"
    stream += b"CONTENT-LENGTH  :  2  \n\n[]"

    assert read_all(Frames(Pieces(stream))) == [b"{}", b"[]"]


def test_a_message_over_the_limit_is_refused_before_its_body_and_dropped_as_it_comes() -> None:
    body = b"x" * (10 * CHUNK + 7)
    source = Pieces(b"Content-Length: %d\r\n\r\n" % len(body), *cut(body, [3, CHUNK, 5 * CHUNK]))
    source.pieces.append(b"Content-Length: 2\r\n\r\n{}")
    frames = Frames(source, limit=CHUNK)

    async def first_then_rest() -> tuple[bytes | Rejected | None, int, list[bytes | Rejected]]:
        refused = await frames.next()
        read_by_then = len(source.asked)
        rest = []
        while (item := await frames.next()) is not None:
            rest.append(item)
        return refused, read_by_then, rest

    refused, read_by_then, rest = asyncio.run(first_then_rest())

    assert refused == Rejected(
        -32600, f"message too large: {len(body)} bytes; the limit is {CHUNK} bytes"
    )
    assert read_by_then == 1  # answered from the header alone
    assert rest == [b"{}"]
    assert max(source.asked) <= CHUNK  # never asked for the whole body at once


def test_a_huge_length_is_refused_without_building_a_huge_number() -> None:
    (refused,) = read_all(Frames(Pieces(b"Content-Length: " + b"9" * 3000 + b"\r\n\r\n")))

    assert isinstance(refused, Rejected) and refused.message.startswith("message too large: ")
    assert len(refused.message) < 100


def test_an_endless_header_line_is_dropped_as_it_comes() -> None:
    source = Pieces(b"X-Long: ", *[b"y" * CHUNK] * 100, b"\r\n\r\n", b"Content-Length: 2\r\n\r\n{}")
    frames = Frames(source)

    found = read_all(frames)

    assert isinstance(found[0], Rejected) and "longer than" in found[0].message
    assert found[1:] == [b"{}"]
    assert len(frames._buffer) <= MAX_HEADER_LINE + CHUNK


def test_a_stream_that_ends_mid_message_just_ends() -> None:
    assert read_all(Frames(Pieces(b"Content-Length: 10\r\n\r\n{}"))) == []
    assert read_all(Frames(Pieces(b"Content-Len"))) == []


def test_a_body_that_is_not_json_decodes_to_a_parse_error() -> None:
    for body in (b"{oops", b"\xff", b"[" * 100_000, b"", b"1" * 5000):
        rejected = decode(body)
        assert isinstance(rejected, Rejected) and rejected.code == PARSE_ERROR, body[:10]
    assert decode(b'{"a": [1]}') == {"a": [1]}


def test_an_answer_is_one_frame_whose_length_counts_bytes() -> None:
    answer = Rejected(-32600, "naïve ✓", "id-1").answer()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head == b"Content-Length: %d" % len(body)
    assert json.loads(body) == {
        "jsonrpc": "2.0",
        "id": "id-1",
        "error": {"code": -32600, "message": "naïve ✓"},
    }
    assert frame({"a": 1}) == b'Content-Length: 8\r\n\r\n{"a": 1}'


def test_only_a_request_has_an_id_to_answer() -> None:
    assert request_id({"id": 3, "method": "m"}) == 3
    assert request_id({"id": "x", "method": "m"}) == "x"
    assert request_id({"id": 3, "result": None}) is None  # a response
    assert request_id({"id": True, "method": "m"}) is None
    assert request_id({"id": [1], "method": "m"}) is None
    assert request_id([{"id": 3, "method": "m"}]) is None


def test_a_body_is_read_as_utf_8_strictly() -> None:
    # The LSP fuzz campaign (seed 20261201): an id of UTF-8-encoded surrogate bytes was
    # taken as text, as were a byte-order mark and UTF-16 (``json.loads`` reads bytes so).
    for body in (
        b'{"id": "\xed\xa0\xbd", "method": "x"}',
        b"\xef\xbb\xbf{}",
        '{"a": 1}'.encode("utf-16"),
    ):
        rejected = decode(body)
        assert isinstance(rejected, Rejected) and rejected.code == PARSE_ERROR, body
    assert decode(b'{"id": "\\ud83d"}') == {"id": "\ud83d"}  # JSON's own escape stays JSON's


def test_the_rest_of_a_body_longer_than_a_header_line_does_not_spoil_the_next_message() -> None:
    # The LSP fuzz campaign (seed 20261201, long run, message 67334): a Content-Length
    # 4,300 bytes short of its body left a tail longer than MAX_HEADER_LINE; with the next
    # message's Content-Length at the end of that "line", the next message was lost too.
    body = b'{"session": "' + b"x" * (3 * MAX_HEADER_LINE) + b'"}'
    stream = b"Content-Length: 10\r\n\r\n" + body + b"Content-Length: 2\r\n\r\n{}"

    found = read_all(Frames(Pieces(*cut(stream, list(range(30, len(stream), 1000))))))

    assert found == [body[:10], b"{}"]


def test_a_header_line_too_long_is_still_refused_when_it_holds_no_length() -> None:
    stream = b"X-Long: " + b"y" * (3 * MAX_HEADER_LINE) + b"\r\n\r\nContent-Length: 2\r\n\r\n[]"

    found = read_all(Frames(Pieces(stream)))

    assert isinstance(found[0], Rejected) and "longer than" in found[0].message
    assert found[1:] == [b"[]"]
