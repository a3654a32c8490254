"""A real HTTP server that stands in for an OpenAI-compatible Chat Completions provider.

It runs on loopback in a daemon thread, so a client in this process or in another
(``tether serve`` started with ``TETHER_BASE_URL=stub.url``) talks to it over a socket.
Tests script its replies in order and read back every request body and its headers::

    with ProviderStub() as stub:
        stub.script(text("hello"), tool_calls(("read_file", {"path": "a.py"})))
        ...
        assert stub.requests[0]["messages"][-1]["content"] == "hi"

``stub.wait_for_requests(n)`` (``await stub.wait_for_requests_async(n)`` in async code)
blocks until ``n`` requests have arrived, where a test would otherwise sleep.

Streaming answers use the exact wire format: ``data: {chunk}\\n\\n`` per chunk over
chunked HTTP/1.1, a usage chunk with ``choices: []`` when the request asks for it
(``stream_options.include_usage``), then ``data: [DONE]``. Faults: ``drop_after``,
``drop_at_byte``, ``stall``, ``garbage``, ``cut_off_in_tool_call``
(``tests/support/stub_faults.py``), ``hang_up`` (no answer at all), ``error_event`` (an
error chunk mid-stream), ``endless`` (a reply that never ends), and tool-call deltas sent
twice or out of turn (``tool_calls(..., order=...)`` over the layout ``call_deltas`` gives).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from tests.support import stub_faults
from tests.support.loopback import NO_REPLY_LEFT, Exchange, LoopbackStub, Scripted, hang_up
from tests.support.stub_faults import EDIT_CALL, Delta, raw_calls, rearranged, thirds

__all__ = [
    "NO_REPLY_LEFT",
    "ProviderStub",
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


@dataclass(frozen=True)
class _Completion(Scripted):
    content: str = ""
    calls: tuple[tuple[str, str], ...] = ()
    chunk_size: int = 4
    delay_s: float = 0.0
    hang_s: float = 0.0
    cut_off: bool = False
    error: tuple[str, str] | None = None  # (type, message) of an error chunk after the role
    ids: tuple[str, ...] | None = None  # the calls' ids as a (hostile) model chose them
    order: tuple[int, ...] | None = None  # the tool-call deltas' order (``call_deltas``)

    def serve(self, exchange: Exchange) -> None:
        assert isinstance(exchange, _Exchange)
        ids = list(self.ids or [exchange.stub.next_call_id() for _ in self.calls])
        finish = "length" if self.cut_off else "tool_calls" if self.calls else "stop"
        out_tokens = max(1, (len(self.content) + sum(len(n) + len(a) for n, a in self.calls)) // 4)
        if not exchange.streaming:
            if exchange.wait(self.hang_s):
                return
            message: dict[str, Any] = {"role": "assistant", "content": self.content or None}
            if self.calls:
                message["tool_calls"] = [
                    {"id": i, "type": "function", "function": {"name": n, "arguments": a}}
                    for i, (n, a) in zip(ids, self.calls, strict=True)
                ]
            choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish}
            body = exchange.envelope("chat.completion", choices=[choice])
            body["usage"] = exchange.usage(out_tokens)
            exchange.send_json(200, body)
            return

        exchange.start_stream()
        exchange.send_delta({"role": "assistant", "content": ""})
        if self.error is not None:
            kind, said = self.error
            error = {"message": said, "type": kind, "param": None, "code": None}
            exchange.send_event(_compact({"error": error}))
            exchange.end_stream()
            return
        pieces: list[dict[str, Any]] = [
            {"content": self.content[at : at + self.chunk_size]}
            for at in range(0, len(self.content), max(1, self.chunk_size))
        ]
        deltas: list[dict[str, Any]] = []
        for index, (call_id, (name, arguments)) in enumerate(zip(ids, self.calls, strict=True)):
            head = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
            deltas.append({"tool_calls": [{"index": index, **head}]})
            parts = thirds(arguments)
            if self.cut_off and index == len(self.calls) - 1:
                parts = parts[:1]
            deltas += [
                {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
                for part in parts
            ]
        pieces += rearranged(deltas, self.order)
        if exchange.wait(self.hang_s):
            return
        for number, delta in enumerate(pieces):
            if number and exchange.wait(self.delay_s):
                return
            exchange.send_delta(delta)
        exchange.send_delta({}, finish_reason=finish)
        if (exchange.body.get("stream_options") or {}).get("include_usage"):
            usage = exchange.envelope("chat.completion.chunk", choices=[])
            usage["usage"] = exchange.usage(out_tokens)
            exchange.send_event(_compact(usage))
        exchange.send_event("[DONE]")
        exchange.end_stream()


@dataclass(frozen=True)
class _Endless(Scripted):
    into: Literal["text", "arguments"]
    piece: str

    def serve(self, exchange: Exchange) -> None:
        assert isinstance(exchange, _Exchange)
        exchange.start_stream()
        exchange.send_delta({"role": "assistant", "content": ""})
        delta: dict[str, Any] = {"content": self.piece}
        if self.into == "arguments":
            function = {"name": "write_file", "arguments": ""}
            head = {"index": 0, "id": exchange.stub.next_call_id(), "type": "function"}
            exchange.send_delta({"tool_calls": [head | {"function": function}]})
            delta = {"tool_calls": [{"index": 0, "function": {"arguments": self.piece}}]}
        stub_faults.repeat_forever(exchange, exchange.framed_delta(delta).encode())


@dataclass(frozen=True)
class _Error(Scripted):
    status: int
    message: str
    retry_after: float | str | None = None

    def serve(self, exchange: Exchange) -> None:
        kind, code = _ERROR_KINDS.get(self.status, ("server_error", None))
        headers = stub_faults.retry_after_header("Retry-After", self.retry_after)
        body = {"error": {"message": self.message, "type": kind, "param": None, "code": code}}
        exchange.send_json(self.status, body, headers)


_ERROR_KINDS = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "unsupported_country_region_territory"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def text(content: str, *, chunk_size: int = 4, delay_s: float = 0.0) -> Scripted:
    """A plain answer, streamed in pieces of ``chunk_size`` characters, ``delay_s`` apart."""
    return _Completion(content=content, chunk_size=chunk_size, delay_s=delay_s)


def tool_calls(
    *calls: tuple[str, dict[str, Any] | str],
    text: str = "",
    delay_s: float = 0.0,
    ids: tuple[str, ...] | None = None,
    order: tuple[int, ...] | None = None,
) -> Scripted:
    """An answer calling tools: ``(name, arguments)``, a dict sent as JSON, a str sent raw.

    Ids are ``call_<n>``, numbered across the stub's whole run, unless ``ids`` names them;
    each call's arguments arrive split over several chunks, after ``text`` if any. ``order``
    sends the tool-call deltas in another order, positions in ``call_deltas(*calls)``: one
    given twice is sent twice.
    """
    made = raw_calls(calls)
    return _Completion(content=text, calls=made, delay_s=delay_s, ids=ids, order=order)


def call_deltas(*calls: tuple[str, dict[str, Any] | str]) -> list[Delta]:
    """The tool-call deltas of ``tool_calls(*calls)`` as sent: per call, its head (id,
    name) and its argument pieces."""
    return stub_faults.call_deltas(raw_calls(calls), stops=False)


def error(
    status: int, message: str = "stub error", *, retry_after: float | str | None = None
) -> Scripted:
    """An OpenAI-style error body, with a ``Retry-After`` header when ``retry_after`` is
    given (a number as seconds, a str as it is: a date, or nonsense)."""
    return _Error(status, message, retry_after)


def error_event(kind: str = "server_error", message: str = "stub error") -> Scripted:
    """A 200 stream that fails after the role chunk with an ``{"error": ...}`` chunk."""
    return _Completion(error=(kind, message))


def hang(seconds: float) -> Scripted:
    """Send headers and one empty delta, go quiet for ``seconds``, then answer ``late``."""
    return _Completion(content="late", hang_s=seconds)


def endless(piece: str = "x" * 1024, *, into: Literal["text", "arguments"] = "text") -> Scripted:
    """A reply that never ends: ``piece`` again and again, as a text delta or as more of
    one ``write_file`` call's arguments, until the client hangs up."""
    return _Endless(into, piece)


def drop_after(n_events: int, reply: Scripted | None = None) -> Scripted:
    """Hang up after ``n_events`` chunks of ``reply`` (default: text, one chunk per letter).

    The first chunk carries only the role: ``drop_after(1)`` shows the caller nothing,
    ``drop_after(3)`` shows it ``"pa"``.
    """
    return stub_faults.drop_after(n_events, reply or text("partial answer", chunk_size=1))


def drop_at_byte(at: int, reply: Scripted | None = None) -> Scripted:
    """Hang up once ``at`` bytes of ``reply``'s answer (default: a text), status line and
    headers included, have gone out."""
    return stub_faults.drop_at_byte(at, reply or text("partial answer", chunk_size=1))


def stall(seconds: float, *, after_events: int = 2, reply: Scripted | None = None) -> Scripted:
    """Go quiet for ``seconds`` after ``after_events`` chunks (by default, once ``"stal"``
    has gone out), then finish ``reply``."""
    return stub_faults.stall(seconds, reply or text("stalled answer"), after_events)


def garbage(raw: str = 'data: {"choices":[{"delta":{"content":"ok"\n\n') -> Scripted:
    """A 200 event stream of ``raw``: by default a chunk whose JSON breaks off."""
    return stub_faults.raw_stream(raw)


def cut_off_in_tool_call(*calls: tuple[str, dict[str, Any] | str], text: str = "") -> Scripted:
    """A reply the token limit ends (``finish_reason: "length"``) a third of the way into
    the last call's arguments; by default one ``edit_file`` call."""
    calls = calls or (EDIT_CALL,)
    return _Completion(content=text, calls=raw_calls(calls), cut_off=True)


def _compact(chunk: dict[str, Any]) -> str:
    # The spacing OpenAI itself sends.
    return json.dumps(chunk, separators=(",", ":"))


class ProviderStub(LoopbackStub):
    route = "/v1/chat/completions"
    base_path = "/v1"
    call_prefix = "call_"

    def error_reply(self, status: int, message: str) -> Scripted:
        return _Error(status, message)

    def exchange(self, handler: Any, body: dict[str, Any], body_size: int) -> Exchange:
        return _Exchange(handler, body, body_size)


class _Exchange(Exchange):
    """A Chat Completions request being answered."""

    def __init__(self, handler: Any, body: dict[str, Any], body_size: int) -> None:
        super().__init__(handler, body, body_size)
        self._id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self._created = int(time.time())

    def envelope(self, kind: str, **fields: Any) -> dict[str, Any]:
        model = self.body.get("model") or "stub-model"
        head = {"id": self._id, "object": kind, "created": self._created, "model": model}
        return {**head, "system_fingerprint": "fp_stub", **fields}

    def usage(self, completion_tokens: int) -> dict[str, int]:
        prompt = self.body_size // 4
        return {
            "prompt_tokens": prompt,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt + completion_tokens,
        }

    def send_delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> None:
        self.send_sse(self.framed_delta(delta, finish_reason))

    def framed_delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        chunk = self.envelope("chat.completion.chunk", choices=[choice])
        if (self.body.get("stream_options") or {}).get("include_usage"):
            chunk["usage"] = None
        return f"data: {_compact(chunk)}\n\n"

    def send_event(self, data: str) -> None:
        self.send_sse(f"data: {data}\n\n")
