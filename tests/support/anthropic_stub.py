"""A real HTTP server that stands in for the Anthropic Messages API, as
``provider_stub.ProviderStub`` does for Chat Completions, with the same API::

    with AnthropicStub() as stub:
        stub.script(text("hello"), tool_calls(("read_file", {"path": "a.py"})))
        ...
        assert stub.headers[0]["anthropic-version"] == "2023-06-01"

Streaming answers use the exact wire format, ``event: <type>`` and ``data: {json}``
per event over chunked HTTP/1.1: ``message_start``, then per content block
``content_block_start`` / ``content_block_delta`` (``text_delta``,
``input_json_delta``) / ``content_block_stop``, a ``ping`` after the first block
opens, ``message_delta`` (stop_reason, usage), ``message_stop``. Tool ids are
``toolu_<n>``. The same faults as ``provider_stub``, ``endless``, ``drop_at_byte`` and
``tool_calls(..., order=...)`` included (here a call's deltas are its block's start, its
``input_json_delta``s and its stop). ``stub.url`` has no ``/v1``: the API's own base URL
has none.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from tests.support import stub_faults
from tests.support.loopback import NO_REPLY_LEFT, Exchange, LoopbackStub, Scripted, hang_up
from tests.support.stub_faults import EDIT_CALL, Delta, raw_calls, rearranged, thirds

__all__ = [
    "NO_REPLY_LEFT",
    "AnthropicStub",
    "Scripted",
    "call_deltas",
    "cut_off_in_tool_call",
    "drop_after",
    "drop_at_byte",
    "endless",
    "error",
    "error_event",
    "garbage",
    "hang",
    "hang_up",
    "stall",
    "text",
    "tool_calls",
]

Event = tuple[str, dict[str, Any]]


@dataclass(frozen=True)
class _Message(Scripted):
    content: str = ""
    calls: tuple[tuple[str, str], ...] = ()
    chunk_size: int = 4
    delay_s: float = 0.0
    hang_s: float = 0.0
    cut_off: bool = False
    error: tuple[str, str] | None = None  # (type, message) of an error event after the start
    order: tuple[int, ...] | None = None  # the tool-call events' order (``call_deltas``)

    def serve(self, exchange: Exchange) -> None:
        ids = [exchange.stub.next_call_id() for _ in self.calls]
        stop = "max_tokens" if self.cut_off else "tool_use" if self.calls else "end_turn"
        out_tokens = max(1, (len(self.content) + sum(len(n) + len(a) for n, a in self.calls)) // 4)
        message = _opening(exchange)
        if not exchange.streaming:
            message["content"] = [{"type": "text", "text": self.content}] if self.content else []
            message["content"] += [
                {"type": "tool_use", "id": i, "name": n, "input": json.loads(a or "{}")}
                for i, (n, a) in zip(ids, self.calls, strict=True)
            ]
            message["stop_reason"] = stop
            message["usage"]["output_tokens"] = out_tokens
            exchange.send_json(200, message)
            return

        exchange.start_stream()
        _send(exchange, ("message_start", {"message": message}))
        if exchange.wait(self.hang_s):
            return
        if self.error is not None:
            kind, said = self.error
            _send(exchange, ("error", {"error": {"type": kind, "message": said}}))
            exchange.end_stream()
            return
        events = self._blocks(ids)
        events.insert(min(1, len(events)), ("ping", {}))
        events += [
            ("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": out_tokens}}),
            ("message_stop", {}),
        ]  # fmt: skip
        for number, event in enumerate(events):
            if number and exchange.wait(self.delay_s):
                return
            _send(exchange, event)
        exchange.end_stream()

    def _blocks(self, ids: list[str]) -> list[Event]:
        events: list[Event] = []
        blocks: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
        if self.content:
            pieces = range(0, len(self.content), max(1, self.chunk_size))
            deltas = [{"type": "text_delta", "text": self.content[at : at + self.chunk_size]}
                      for at in pieces]  # fmt: skip
            blocks.append(({"type": "text", "text": ""}, deltas))
        for number, (call_id, (name, arguments)) in enumerate(zip(ids, self.calls, strict=True)):
            parts = thirds(arguments)
            if self.cut_off and number == len(self.calls) - 1:
                parts = parts[:1]
            head = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
            blocks.append((head, [{"type": "input_json_delta", "partial_json": p} for p in parts]))
        calls: list[Event] = []
        for index, (head, deltas) in enumerate(blocks):
            block = [("content_block_start", {"index": index, "content_block": head})]
            block += [("content_block_delta", {"index": index, "delta": d}) for d in deltas]
            block.append(("content_block_stop", {"index": index}))
            if head["type"] == "text":
                events += block
            else:
                calls += block
        return events + rearranged(calls, self.order)


@dataclass(frozen=True)
class _Endless(Scripted):
    into: Literal["text", "arguments"]
    piece: str

    def serve(self, exchange: Exchange) -> None:
        exchange.start_stream()
        _send(exchange, ("message_start", {"message": _opening(exchange)}))
        head: dict[str, Any] = {"type": "text", "text": ""}
        delta = {"type": "text_delta", "text": self.piece}
        if self.into == "arguments":
            call_id = exchange.stub.next_call_id()
            head = {"type": "tool_use", "id": call_id, "name": "write_file", "input": {}}
            delta = {"type": "input_json_delta", "partial_json": self.piece}
        _send(exchange, ("content_block_start", {"index": 0, "content_block": head}))
        event = _framed(("content_block_delta", {"index": 0, "delta": delta}))
        stub_faults.repeat_forever(exchange, event.encode())


def _opening(exchange: Exchange) -> dict[str, Any]:
    """The message as ``message_start`` opens it: no content yet."""
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": exchange.body.get("model") or "stub-model",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": exchange.body_size // 4, "output_tokens": 1},
    }


@dataclass(frozen=True)
class _Error(Scripted):
    status: int
    message: str
    retry_after: float | str | None = None

    def serve(self, exchange: Exchange) -> None:
        headers = {"request-id": f"req_{uuid.uuid4().hex[:24]}"}
        headers |= stub_faults.retry_after_header("retry-after", self.retry_after)
        kind = _ERROR_KINDS.get(self.status, "api_error")
        body = {"type": "error", "error": {"type": kind, "message": self.message}}
        exchange.send_json(self.status, body, headers)


_ERROR_KINDS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}


def text(content: str, *, chunk_size: int = 4, delay_s: float = 0.0) -> Scripted:
    """A plain answer: one text block, in deltas of ``chunk_size`` characters, ``delay_s`` apart."""
    return _Message(content=content, chunk_size=chunk_size, delay_s=delay_s)


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str],
    text: str = "",
    delay_s: float = 0.0,
    order: tuple[int, ...] | None = None,
) -> Scripted:
    """An answer calling tools: ``(name, arguments)``, a dict sent as JSON, a str sent raw.

    Each call is a ``tool_use`` block whose arguments arrive as several
    ``input_json_delta`` partials, after a text block when ``text`` is given. ``order``
    sends the calls' events in another order, positions in ``call_deltas(*calls)``: one
    given twice is sent twice.
    """
    return _Message(content=text, calls=raw_calls(calls), delay_s=delay_s, order=order)


def call_deltas(*calls: tuple[str, dict[str, Any] | str]) -> list[Delta]:
    """The events of ``tool_calls(*calls)``'s calls as sent: per call, its block's start,
    its argument pieces and its stop."""
    return stub_faults.call_deltas(raw_calls(calls), stops=True)


def error(
    status: int, message: str = "stub error", *, retry_after: float | str | None = None
) -> Scripted:
    """An Anthropic error body (529 is ``overloaded_error``), ``retry-after`` when given
    (a number as seconds, a str as it is)."""
    return _Error(status, message, retry_after)


def error_event(kind: str = "overloaded_error", message: str = "Overloaded") -> Scripted:
    """A 200 stream that fails after ``message_start`` with an ``error`` event."""
    return _Message(error=(kind, message))


def hang(seconds: float) -> Scripted:
    """Send ``message_start``, go quiet for ``seconds``, then answer ``late``."""
    return _Message(content="late", hang_s=seconds)


def endless(piece: str = "x" * 1024, *, into: Literal["text", "arguments"] = "text") -> Scripted:
    """A reply that never ends: ``piece`` again and again, as a ``text_delta`` or as more of
    one ``write_file`` call's ``input_json_delta``, until the client hangs up."""
    return _Endless(into, piece)


def drop_after(n_events: int, reply: Scripted | None = None) -> Scripted:
    """Hang up after ``n_events`` events of ``reply`` (default: text, a letter per delta).

    ``message_start``, ``content_block_start`` and ``ping`` come first: ``drop_after(3)``
    shows the caller nothing, ``drop_after(5)`` shows it ``"pa"``.
    """
    return stub_faults.drop_after(n_events, reply or text("partial answer", chunk_size=1))


def drop_at_byte(at: int, reply: Scripted | None = None) -> Scripted:
    """Hang up once ``at`` bytes of ``reply``'s answer (default: a text), status line and
    headers included, have gone out."""
    return stub_faults.drop_at_byte(at, reply or text("partial answer", chunk_size=1))


def stall(seconds: float, *, after_events: int = 4, reply: Scripted | None = None) -> Scripted:
    """Go quiet for ``seconds`` after ``after_events`` events (by default, once ``"stal"``
    has gone out), then finish ``reply``."""
    return stub_faults.stall(seconds, reply or text("stalled answer"), after_events)


def garbage(
    raw: str = 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n',
) -> Scripted:
    """A 200 event stream of ``raw``: by default an event whose JSON breaks off."""
    return stub_faults.raw_stream(raw)


def cut_off_in_tool_call(*calls: tuple[str, dict[str, Any] | str], text: str = "") -> Scripted:
    """A reply the token limit ends (``stop_reason: "max_tokens"``) a third of the way
    into the last call's arguments; by default one ``edit_file`` call."""
    calls = calls or (EDIT_CALL,)
    return _Message(content=text, calls=raw_calls(calls), cut_off=True)


def _send(exchange: Exchange, event: Event) -> None:
    exchange.send_sse(_framed(event))


def _framed(event: Event) -> str:
    kind, data = event
    payload = json.dumps({"type": kind, **data}, separators=(",", ":"))
    return f"event: {kind}\ndata: {payload}\n\n"


class AnthropicStub(LoopbackStub):
    route = "/v1/messages"
    base_path = ""
    call_prefix = "toolu_"

    def error_reply(self, status: int, message: str) -> Scripted:
        return _Error(status, message)
