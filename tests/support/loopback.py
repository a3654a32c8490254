"""What the provider stubs share: a real HTTP server on loopback, answers scripted in
order, every request recorded, and faults injected into any streamed answer.

A stub (``provider_stub.ProviderStub``, ``anthropic_stub.AnthropicStub``) names its
route and speaks its wire format; this module serves it in a daemon thread, so a
client in this process or another talks to it over a socket. The fault modes work
on whatever a stub streams: hang up after ``n`` events, go quiet before one, or send
bytes that are not the wire format at all, or break the connection at any byte of the
answer, its status line and headers included (``stub_faults.py``); ``hang_up()``
answers nothing at all.

A test that must know a request has arrived (before it stops the stub, say) waits
for it with ``stub.wait_for_requests(n)``, or ``await stub.wait_for_requests_async(n)``
from async code, rather than sleeping.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import itertools
import json
import socket
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, Self

NO_REPLY_LEFT = "provider stub: no scripted reply left"


class Scripted:
    """One scripted answer to one request."""

    def serve(self, exchange: Exchange) -> None:
        raise NotImplementedError


class HangUp(Exception):
    """Raised inside ``serve`` to drop the connection there, mid-answer."""


class _HangUpAtOnce(Scripted):
    def serve(self, exchange: Exchange) -> None:
        raise HangUp


def hang_up() -> Scripted:
    """Read the request, then close the connection without a word: a provider restarting."""
    return _HangUpAtOnce()


class Headers(dict[str, str]):
    """Header names kept in lower case and looked up in any case."""

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and super().__contains__(key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)


class LoopbackStub:
    """Records ``requests`` (bodies), ``headers``, ``arrivals`` (when each came, by
    ``time.monotonic()``) and ``connections`` (how many were opened); answers them with
    what was scripted."""

    route: ClassVar[str]  # the one path served, e.g. "/v1/chat/completions"
    base_path: ClassVar[str]  # what ``url`` ends with, e.g. "/v1"
    call_prefix: ClassVar[str]  # tool call ids are <prefix><n>, numbered across the run

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.arrivals: list[float] = []  # time.monotonic() as each request arrived
        self.connections = 0  # opened by clients: a kept-alive one serves many requests
        self._queue: deque[Scripted] = deque()
        # Guards the queue and the records; notified at each request and at stop.
        self._lock = threading.Condition()
        self._ids = itertools.count(1)
        self.stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def error_reply(self, status: int, message: str) -> Scripted:
        """An error in the stub's own wire format."""
        raise NotImplementedError

    def exchange(self, handler: _Handler, body: dict[str, Any], body_size: int) -> Exchange:
        return Exchange(handler, body, body_size)

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError(f"start the {type(self).__name__} before asking for its url")
        return f"http://127.0.0.1:{self._server.server_port}{self.base_path}"

    def start(self) -> Self:
        self.stopping.clear()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.stub = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and drop open connections; a second stop, from any thread, does nothing."""
        with self._lock:
            server, thread = self._server, self._thread
            if server is None:
                return
            self._server = self._thread = None
            self.stopping.set()
            self._lock.notify_all()
        server.shutdown()
        server.drop_connections()
        server.server_close()
        if thread is not None:
            thread.join(timeout=1)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def script(self, *replies: Scripted) -> None:
        for reply in replies:
            if not isinstance(reply, Scripted):
                raise TypeError(f"script() takes scripted answers; got {reply!r}")
        with self._lock:
            self._queue.extend(replies)

    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def wait_for_requests(self, n: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """Block until the stub has received ``n`` requests in all; return their bodies.

        Raises ``AssertionError`` saying how many had arrived if ``timeout`` seconds
        pass first, or the stub stops first. Safe from any thread.
        """
        with self._lock:
            self._lock.wait_for(lambda: len(self.requests) >= n or self.stopping.is_set(), timeout)
            if len(self.requests) < n:
                why = "before it stopped" if self.stopping.is_set() else f"in {timeout:g} s"
                raise AssertionError(
                    f"{type(self).__name__} received {len(self.requests)} of the {n} "
                    f"requests awaited {why}"
                )
            return list(self.requests)

    async def wait_for_requests_async(self, n: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """``wait_for_requests`` for async tests: waits in a thread, not on the event loop."""
        return await asyncio.to_thread(self.wait_for_requests, n, timeout)

    def take(self, body: dict[str, Any], headers: dict[str, str]) -> Scripted:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            self.arrivals.append(time.monotonic())
            self._lock.notify_all()
            return self._queue.popleft() if self._queue else self.error_reply(500, NO_REPLY_LEFT)

    def next_call_id(self) -> str:
        with self._lock:
            return f"{self.call_prefix}{next(self._ids)}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    stub: LoopbackStub

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
            self.stub.connections += 1
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
        stub = self.server.stub
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.split("?")[0].rstrip("/") != stub.route:
            return stub.error_reply(404, f"no route {self.path}").serve(Exchange(self, {}, 0))
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        if not isinstance(body, dict):
            return stub.error_reply(400, "body is not a JSON object").serve(Exchange(self, {}, 0))
        headers = Headers((name.lower(), value) for name, value in self.headers.items())
        reply = stub.take(body, headers)
        try:
            reply.serve(stub.exchange(self, body, len(raw)))
        except (BrokenPipeError, ConnectionResetError, HangUp):
            self.close_connection = True


class Exchange:
    """One request being answered: what was asked, and the ways to answer it."""

    def __init__(self, handler: _Handler, body: dict[str, Any], body_size: int) -> None:
        self._handler = handler
        self.body = body
        self.body_size = body_size
        self.stub = handler.server.stub
        self.streaming = bool(body.get("stream"))
        self.drop_after: int | None = None
        self.stall_after: int | None = None
        self.stall_s = 0.0
        self._events = 0

    def wait(self, seconds: float) -> bool:
        """Sleep; True (and the connection marked to drop) if the stub stopped meanwhile."""
        if self.stub.stopping.wait(seconds):
            self.abort()
            return True
        return False

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
        self.start_chunked(
            200, {"Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache"}
        )

    def start_chunked(self, status: int, headers: dict[str, str]) -> None:
        """The status and headers of an answer whose body follows in ``write_chunk``s."""
        h = self._handler
        h.send_response(status)
        for name, value in headers.items():
            h.send_header(name, value)
        h.send_header("Transfer-Encoding", "chunked")
        h.end_headers()

    def send_sse(self, framed: str) -> None:
        """One whole event, framed; where a script's faults strike."""
        if self._events == self.drop_after:
            raise HangUp
        if self._events == self.stall_after and self.wait(self.stall_s):
            raise HangUp
        self.write_chunk(framed.encode())
        self._events += 1

    def rendered(self, reply: Scripted) -> bytes:
        """Every byte ``reply`` would send (status line, headers, body, chunk framing),
        kept instead of sent: a fault can then cut the answer at any byte of it."""
        handler = self._handler
        real, kept = handler.wfile, io.BytesIO()
        handler.wfile = kept
        try:
            reply.serve(self)
        finally:
            handler.wfile = real
        return kept.getvalue()

    def write_raw(self, data: bytes) -> None:
        """Bytes as they are, outside any framing: part of an answer, or no HTTP at all."""
        self._handler.wfile.write(data)

    def write_chunk(self, payload: bytes) -> None:
        self._handler.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def end_stream(self) -> None:
        self._handler.wfile.write(b"0\r\n\r\n")

    def abort(self) -> None:
        """Drop the connection once this answer returns."""
        self._handler.close_connection = True
