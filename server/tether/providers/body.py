"""A response's body, read in bounded pieces.

Every byte a provider sends is read through here. httpx inflates gzip and deflate one
network read at a time, so 64 KiB from the socket can become 64 MiB at once; here no
piece is ever larger than ``PIECE`` bytes, however the body was compressed. So what
tether holds is bounded by what it chose to keep (a line, a reply, an error message),
never by what the provider sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import zlib
from collections.abc import AsyncGenerator, AsyncIterable, AsyncIterator
from contextlib import aclosing

import httpx

from tether.providers.failures import BrokenStream

PIECE = 64 * 1024  # the most bytes handed on at once
FINISH_S, FINISH_BYTES = 0.2, PIECE  # what a server may send after a whole reply
# Content codings tether reads, as httpx does; any other is passed on as it came.
WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


async def pieces(response: httpx.Response) -> AsyncGenerator[bytes, None]:
    """The body, decoded, in pieces of at most ``PIECE`` bytes."""
    if response.is_stream_consumed:  # read whole, and decoded, already: built in memory
        async for piece in _sliced(_once(response.content)):
            yield piece
        return
    chunks: AsyncIterable[bytes] = _sliced(response.aiter_raw())
    codings = [c.strip().lower() for c in response.headers.get("content-encoding", "").split(",")]
    for coding in reversed(codings):  # the last coding applied is undone first
        if coding in WBITS:
            chunks = _inflated(chunks, coding)
    async for piece in chunks:
        yield piece


async def read_at_most(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of the body, and whether there were more (left unread)."""
    async with aclosing(pieces(response)) as read:  # stopped early, its inflater goes at once
        return await first_bytes(read, limit)


async def first_bytes(body: AsyncIterable[bytes], limit: int) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of ``body`` (``pieces``), and whether there were more."""
    kept = bytearray()
    async for piece in body:
        kept += piece
        if len(kept) > limit:
            return bytes(kept[:limit]), True
    return bytes(kept), False


async def finished(body: AsyncIterator[bytes]) -> None:
    """The rest of a body whose reply is whole, read: only a body read to its end gives
    its connection back to the pool, and a body left with its last bytes unread (the
    chunked body's end after ``[DONE]`` or ``message_stop``) cost every request a new
    connection (a TCP and TLS handshake with the provider, each round of a turn). What a
    server sends past the reply is given ``FINISH_S`` and ``FINISH_BYTES`` at most; past
    them, or on any error, the connection is closed as before."""
    left = FINISH_BYTES
    with contextlib.suppress(TimeoutError, httpx.HTTPError, BrokenStream):
        async with asyncio.timeout(FINISH_S):
            async for piece in body:
                left -= len(piece)
                if left < 0:
                    return


async def _once(content: bytes) -> AsyncIterator[bytes]:
    yield content


async def _sliced(chunks: AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        for at in range(0, len(chunk), PIECE):
            yield chunk[at : at + PIECE]


async def _inflated(chunks: AsyncIterable[bytes], coding: str) -> AsyncIterator[bytes]:
    inflater = zlib.decompressobj(WBITS[coding])
    fresh = True  # nothing inflated yet: a deflate body may still turn out to be raw deflate
    async for chunk in chunks:
        data, more = chunk, True
        while more and not inflater.eof:  # past the end, zlib would keep whatever follows
            try:
                out = inflater.decompress(data, PIECE)
            except zlib.error as exc:
                if fresh and coding == "deflate":
                    inflater, fresh = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                raise BrokenStream(f"sent a {coding} body that does not inflate ({exc})") from None
            fresh = False
            data = inflater.unconsumed_tail
            # A full piece can leave output inside zlib with no input left: ask again.
            more = bool(data) or len(out) == PIECE
            if out:
                yield out
