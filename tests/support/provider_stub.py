"""A real HTTP server that stands in for an OpenAI-compatible Chat Completions provider.

It runs on loopback in a daemon thread, so a client in this process or in another
(``tether serve`` started with ``TETHER_BASE_URL=stub.url``) talks to it over a socket.
Tests script its replies in order and read back every request body and its headers::

    with ProviderStub() as stub:
        stub.script(text("hello"), tool_calls(("read_file", {"path": "a.py"})))
        ...
        assert stub.requests[0]["messages"][-1]["content"] == "hi"

Streaming answers use the exact wire format: ``data: {chunk}\\n\\n`` per chunk over
chunked HTTP/1.1, a usage chunk with ``choices: []`` when the request asks for it
(``stream_options.include_usage``), then ``data: [DONE]``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
import time
import uuid
from collections import deque
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["ProviderStub", "Scripted", "error", "hang", "text", "tool_calls"]

NO_REPLY_LEFT = "provider stub: no scripted reply left"


class Scripted:
    """One scripted answer to one request. Build with text(), tool_calls(), error(), hang()."""

    def serve(self, exchange: _Exchange) -> None:
        raise NotImplementedError


@dataclass(frozen=True)
class _Completion(Scripted):
    content: str = ""
    calls: tuple[tuple[str, str], ...] = ()
    chunk_size: int = 4
    delay_s: float = 0.0
    hang_s: float = 0.0

    def serve(self, exchange: _Exchange) -> None:
        ids = [exchange.stub._next_call_id() for _ in self.calls]
        finish = "tool_calls" if self.calls else "stop"
        out_tokens = max(1, (len(self.content) + sum(len(n) + len(a) for n, a in self.calls)) // 4)
        if not exchange.streaming:
            if exchange.stub._stopping.wait(self.hang_s):
                exchange.abort()
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
        pieces: list[dict[str, Any]] = [
            {"content": self.content[at : at + self.chunk_size]}
            for at in range(0, len(self.content), max(1, self.chunk_size))
        ]
        for index, (call_id, (name, arguments)) in enumerate(zip(ids, self.calls, strict=True)):
            head = {"id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
            pieces.append({"tool_calls": [{"index": index, **head}]})
            pieces += [
                {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
                for part in _thirds(arguments)
            ]
        if exchange.stub._stopping.wait(self.hang_s):
            exchange.abort()
            return
        for number, delta in enumerate(pieces):
            if number and exchange.stub._stopping.wait(self.delay_s):
                exchange.abort()
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
class _Error(Scripted):
    status: int
    message: str
    retry_after: float | None = None

    def serve(self, exchange: _Exchange) -> None:
        kind, code = _ERROR_KINDS.get(self.status, ("server_error", None))
        headers = {} if self.retry_after is None else {"Retry-After": f"{self.retry_after:g}"}
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
    *calls: tuple[str, dict[str, Any] | str], text: str = "", delay_s: float = 0.0
) -> Scripted:
    """An answer calling tools: ``(name, arguments)``, a dict sent as JSON, a str sent raw.

    Ids are ``call_<n>``, numbered across the stub's whole run; each call's arguments
    arrive split over several chunks, after ``text`` if any.
    """
    raw = tuple((name, a if isinstance(a, str) else json.dumps(a)) for name, a in calls)
    return _Completion(content=text, calls=raw, delay_s=delay_s)


def error(
    status: int, message: str = "stub error", *, retry_after: float | None = None
) -> Scripted:
    """An OpenAI-style error body, with a ``Retry-After`` header when ``retry_after`` is given."""
    return _Error(status, message, retry_after)


def hang(seconds: float) -> Scripted:
    """Send headers and one empty delta, go quiet for ``seconds``, then answer ``late``."""
    return _Completion(content="late", hang_s=seconds)


def _thirds(arguments: str) -> list[str]:
    size = max(1, -(-len(arguments) // 3))
    return [arguments[at : at + size] for at in range(0, len(arguments), size)] or [""]


def _compact(chunk: dict[str, Any]) -> str:
    # The spacing OpenAI itself sends.
    return json.dumps(chunk, separators=(",", ":"))


class _Headers(dict[str, str]):
    """Header names kept in lower case and looked up in any case."""

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


class ProviderStub:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._queue: deque[Scripted] = deque()
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("start the ProviderStub before asking for its url")
        return f"http://127.0.0.1:{self._server.server_port}/v1"

    def start(self) -> ProviderStub:
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.drop_connections()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=1)
        self._server = self._thread = None

    def __enter__(self) -> ProviderStub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *replies: Scripted) -> None:
        for reply in replies:
            if not isinstance(reply, Scripted):
                raise TypeError(
                    f"script() takes text(), tool_calls(), error() or hang(); got {reply!r}"
                )
        with self._lock:
            self._queue.extend(replies)

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> Scripted:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            return self._queue.popleft() if self._queue else _Error(500, NO_REPLY_LEFT)

    def _next_call_id(self) -> str:
        with self._lock:
            return f"call_{next(self._ids)}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stub: ProviderStub

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def drop_connections(self) -> None:
        # Kept-alive and hanging connections would otherwise keep their threads
        # blocked on a socket after the stub has stopped.
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-answer (a cancelled turn) is normal here.
        pass


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle on, each answer
    # waits out the client's delayed ACK (about 40 ms).
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?")[0].rstrip("/") != "/v1/chat/completions":
            return _Exchange(self, {}, 0).send_json(
                404, {"error": {"message": f"no route {self.path}"}}
            )
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return _Exchange(self, {}, 0).send_json(
                400, {"error": {"message": "body is not a JSON object"}}
            )
        headers = _Headers((name.lower(), value) for name, value in self.headers.items())
        reply = self.server.stub._take(body, headers)
        try:
            reply.serve(_Exchange(self, body, len(raw)))
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class _Exchange:
    """One request being answered: what was asked, and the ways to answer it."""

    def __init__(self, handler: _Handler, body: dict[str, Any], body_size: int) -> None:
        self._handler = handler
        self.body = body
        self.body_size = body_size
        self.stub = handler.server.stub
        self.streaming = bool(body.get("stream"))
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

    def send_json(
        self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
    ) -> None:
        data = json.dumps(body).encode()
        h = self._handler
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(data)

    def start_stream(self) -> None:
        h = self._handler
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream; charset=utf-8")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

    def send_delta(self, delta: dict[str, Any], finish_reason: str | None = None) -> None:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        chunk = self.envelope("chat.completion.chunk", choices=[choice])
        if (self.body.get("stream_options") or {}).get("include_usage"):
            chunk["usage"] = None
        self.send_event(_compact(chunk))

    def send_event(self, data: str) -> None:
        payload = f"data: {data}\n\n".encode()
        self._handler.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def end_stream(self) -> None:
        self._handler.wfile.write(b"0\r\n\r\n")

    def abort(self) -> None:
        """Drop the connection mid-answer (the stub is stopping)."""
        self._handler.close_connection = True
