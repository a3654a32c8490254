"""Pieces of scripted answers that know no wire format: the fault modes, which work
on whatever a stub streams, and how a call's arguments are cut into pieces.

A reply's tool-call deltas are laid out by ``call_deltas`` (each call's head, its
argument pieces, and, where the wire format has one, its stop); a stub's ``tool_calls``
takes an ``order`` of positions in that layout, so a test can send a delta twice or
out of turn, as a buggy server or proxy does.

The floods (``endless_line``, ``huge_error``, and ``repeat_forever`` under each stub's
``endless``) write one prepared piece again and again until the client hangs up or
the stub stops: a provider sending without end costs the stub nothing."""

from __future__ import annotations

import json
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from tests.support.loopback import Exchange, HangUp, Scripted

T = TypeVar("T")


@dataclass(frozen=True)
class _Faulty(Scripted):
    reply: Scripted
    drop_after: int | None = None
    stall_after: int | None = None
    stall_s: float = 0.0

    def serve(self, exchange: Exchange) -> None:
        exchange.drop_after, exchange.stall_after = self.drop_after, self.stall_after
        exchange.stall_s = self.stall_s
        self.reply.serve(exchange)


@dataclass(frozen=True)
class _Raw(Scripted):
    raw: str | bytes

    def serve(self, exchange: Exchange) -> None:
        exchange.start_stream()
        exchange.write_chunk(self.raw.encode() if isinstance(self.raw, str) else self.raw)
        exchange.end_stream()


@dataclass(frozen=True)
class _DropAtByte(Scripted):
    at: int
    reply: Scripted

    def serve(self, exchange: Exchange) -> None:
        exchange.write_raw(exchange.rendered(self.reply)[: self.at])
        raise HangUp


@dataclass(frozen=True)
class _NotHTTP(Scripted):
    raw: bytes

    def serve(self, exchange: Exchange) -> None:
        exchange.write_raw(self.raw)
        raise HangUp


@dataclass(frozen=True)
class _RawError(Scripted):
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...]

    def serve(self, exchange: Exchange) -> None:
        headers = {"Content-Type": "application/json", **dict(self.headers)}
        exchange.start_chunked(self.status, headers)
        exchange.write_chunk(self.body)
        exchange.end_stream()


@dataclass(frozen=True)
class _EndlessLine(Scripted):
    head: bytes

    def serve(self, exchange: Exchange) -> None:
        exchange.start_stream()
        exchange.write_chunk(self.head)
        repeat_forever(exchange, b"x" * 65536)


@dataclass(frozen=True)
class _HugeError(Scripted):
    status: int
    head: bytes
    size: int
    gzip: bool

    def serve(self, exchange: Exchange) -> None:
        headers = {"Content-Type": "application/json"}
        exchange.start_chunked(
            self.status, headers | ({"Content-Encoding": "gzip"} if self.gzip else {})
        )
        # The smallest window and state: "xxx..." compresses a thousandfold all the same.
        deflater = zlib.compressobj(9, zlib.DEFLATED, 9 | 16, memLevel=1)
        filler = b"x" * 2**16  # small: the stub runs in the process a test measures
        encode = deflater.compress if self.gzip else bytes
        exchange.write_chunk(encode(self.head))
        for _ in range(self.size // len(filler)):
            if exchange.stub.stopping.is_set():
                return exchange.abort()
            if piece := encode(filler):
                exchange.write_chunk(piece)
        if self.gzip:
            exchange.write_chunk(deflater.flush())
        exchange.end_stream()


def repeat_forever(exchange: Exchange, payload: bytes) -> None:
    """Write ``payload`` as one chunk after another until the client hangs up (the write
    raises) or the stub stops."""
    while not exchange.stub.stopping.is_set():
        exchange.write_chunk(payload)
    exchange.abort()


def endless_line(head: str = "data: ") -> Scripted:
    """A 200 event stream of one line that never ends: ``head``, then ``x`` without end."""
    return _EndlessLine(head.encode())


def huge_error(status: int, head: str, size: int, *, gzip: bool = False) -> Scripted:
    """An error body of about ``size`` bytes: ``head`` (the start of the wire format's error
    JSON), then ``x`` to the end, streamed (gzip-compressed when ``gzip``: a small body on
    the wire that inflates to ``size``)."""
    return _HugeError(status, head.encode(), size, gzip)


def drop_after(n_events: int, reply: Scripted) -> Scripted:
    """Stream ``reply`` but hang up, mid-chunked-body, once ``n_events`` events are out."""
    return _Faulty(reply, drop_after=n_events)


def stall(seconds: float, reply: Scripted, after_events: int) -> Scripted:
    """Stream ``reply`` but go quiet for ``seconds`` once ``after_events`` events are out."""
    return _Faulty(reply, stall_after=after_events, stall_s=seconds)


def raw_stream(raw: str | bytes) -> Scripted:
    """A 200 event stream whose body is exactly ``raw`` (a str as UTF-8), well formed or
    not."""
    return _Raw(raw)


def retry_after_header(name: str, value: float | str | None) -> dict[str, str]:
    """The header asking for a wait: a number as seconds, a str as it is."""
    if value is None:
        return {}
    return {name: value if isinstance(value, str) else f"{value:g}"}


def drop_at_byte(at: int, reply: Scripted) -> Scripted:
    """Send the first ``at`` bytes of ``reply``'s whole answer (status line and headers
    included, chunk framing and all), then hang up: a connection that breaks at any byte."""
    return _DropAtByte(at, reply)


def not_http(raw: bytes) -> Scripted:
    """Answer ``raw`` where an HTTP response belongs, then hang up."""
    return _NotHTTP(raw)


def raw_error(status: int, body: bytes, headers: dict[str, str] | None = None) -> Scripted:
    """An error status whose body is exactly ``body`` (JSON or not, of any shape)."""
    return _RawError(status, body, tuple((headers or {}).items()))


DeltaKind = Literal["head", "arguments", "stop"]


@dataclass(frozen=True)
class Delta:
    """One tool-call delta of a reply: which call, and what of it (``piece``: which
    piece of its arguments)."""

    call: int
    kind: DeltaKind
    piece: int = 0


def call_deltas(calls: tuple[tuple[str, str], ...], *, stops: bool) -> list[Delta]:
    """The tool-call deltas a stub sends for ``calls``, in the order it sends them."""
    layout: list[Delta] = []
    for number, (_, arguments) in enumerate(calls):
        layout.append(Delta(number, "head"))
        layout += [Delta(number, "arguments", at) for at in range(len(thirds(arguments)))]
        layout += [Delta(number, "stop")] if stops else []
    return layout


def rearranged(items: Sequence[T], order: Sequence[int] | None) -> list[T]:
    """``items`` in ``order``, positions in them: one given twice is sent twice, one left
    out is not sent. None keeps them as they are."""
    return list(items) if order is None else [items[at] for at in order]


def raw_calls(calls: tuple[tuple[str, dict[str, Any] | str], ...]) -> tuple[tuple[str, str], ...]:
    """``(name, arguments)`` with the arguments as sent: a dict as JSON, a str as it is."""
    return tuple((name, a if isinstance(a, str) else json.dumps(a)) for name, a in calls)


def thirds(arguments: str) -> list[str]:
    """The pieces a call's arguments are streamed in."""
    size = max(1, -(-len(arguments) // 3))
    return [arguments[at : at + size] for at in range(0, len(arguments), size)] or [""]


# The call ``cut_off_in_tool_call()`` makes when given none.
EDIT_CALL: tuple[str, dict[str, Any] | str] = (
    "edit_file",
    {"path": "a.py", "old": "x = 1", "new": "x = 2"},
)
