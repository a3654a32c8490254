"""``tether serve --tcp HOST:PORT``: loopback only unless ``--allow-remote``, and a
connection is served only once its ``initialize`` carries the token kept in
``state_dir/tcp-token`` as ``initializationOptions.tether.token``.

pygls's own ``start_tcp`` points its output at each new connection and shuts the server
down when any connection ends, so the door is kept here. Each connection is read with
``framing.Frames`` (a small limit, a deadline) up to its first message. An ``initialize``
with the token (compared in constant time) is handed to pygls with the token taken out,
as ``start_tcp`` hands a connection over: ``set_writer``, then the read loop of
``serving.py``. Anything else is answered with a JSON-RPC error and closed, never touching
the server or the client it serves. One client is served; when its connection ends, the
server ends, as it does over stdio.

The token never leaves the file and the comparison: it is not logged, not echoed, not
handed to pygls or to the settings.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import logging
import os
import secrets
import socket
import stat
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.children import reap_without_threads
from tether.lsp.framing import (
    CHUNK,
    INVALID_REQUEST,
    MAX_MESSAGE_BYTES,
    SERVER_NOT_INITIALIZED,
    Frames,
    Rejected,
    decode,
    request_id,
)
from tether.lsp.serving import INTERRUPTED, ended, pump

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer

log = logging.getLogger(__name__)
TOKEN_FILE = "tcp-token"
FIRST_MESSAGE_BYTES = 2**20  # the most a connection may send before it has proved itself
FIRST_MESSAGE_S = 10.0  # ...and how long it has to do so
MAX_KNOCKING = 64  # connections at once that have not proved themselves yet
LINGER_S = 2.0  # how long a refused connection's answer may take to leave
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)  # the token file is never a symlink's target
_HOW = (
    "a TCP connection must begin with `initialize` carrying initializationOptions.tether.token: "
    "the token in the file `tether serve --tcp` printed"
)


class BadAddress(ValueError):
    """A ``--tcp`` address tether does not listen on; the message says why."""


@dataclass(frozen=True)
class Address:
    hosts: list[str]  # the addresses to bind, resolved
    port: int

    @classmethod
    def parse(cls, text: str, allow_remote: bool) -> Address:
        """``HOST:PORT`` (``[::1]:PORT`` for IPv6), resolved; a host that is not loopback
        only with ``allow_remote``."""
        host, _, port = text.rpartition(":")
        host = host.removeprefix("[").removesuffix("]")
        if not host or not port.isdigit() or int(port) > 65535:
            raise BadAddress(f"--tcp wants HOST:PORT, got {text!r}")
        try:
            found = socket.getaddrinfo(host, int(port), type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as exc:
            raise BadAddress(f"cannot resolve {host!r}: {exc}") from None
        hosts = list(dict.fromkeys(str(info[4][0]) for info in found))
        if not allow_remote and not all(_loopback(h) for h in hosts):
            raise BadAddress(
                f"{host} is not a loopback address: --tcp listens only on this machine "
                "(127.0.0.1, ::1, localhost) unless --allow-remote is given, and then anyone "
                "who can reach it with the token can run commands, unencrypted"
            )
        # Port 0 picks a free port per address: one address, so one port to print.
        return cls(hosts[:1] if int(port) == 0 else hosts, int(port))


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host.partition("%")[0]).is_loopback
    except ValueError:
        return False


def token_file(state_dir: Path) -> Path:
    """The token file, made (mode 0600, a new random token) when it is missing, or when it
    is one that others could have read."""
    path = state_dir / TOKEN_FILE
    if _read_token(path) is not None:
        return path
    if path.exists() or path.is_symlink():
        log.warning("%s could be read by others, or held no token: it gets a new token", path)
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    fresh = path.with_name(f".{TOKEN_FILE}.{secrets.token_hex(8)}")
    # 0600 from the start, so the token is never readable by anyone else, not for a moment.
    # Windows has no POSIX modes: there the file keeps the ACL it inherits from the user's
    # own state directory (in the profile), which only the user and administrators read.
    fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
    try:
        os.write(fd, secrets.token_urlsafe(32).encode() + b"\n")
    finally:
        os.close(fd)
    os.replace(fresh, path)  # whole or not at all, for a server reading it right now
    return path


def _read_token(path: Path) -> bytes | None:
    """The token in the file; None if there is none, or others could read it."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            return None
        if sys.platform != "win32" and (status.st_mode & 0o077 or status.st_uid != os.geteuid()):
            return None
        token = os.read(fd, 1024).strip()
    finally:
        os.close(fd)
    return token or None


class Door:
    """Lets one client in: the first connection whose ``initialize`` holds the token. The
    token is read from its file at each knock, so servers sharing a state dir agree on it
    and a new token takes effect at once."""

    def __init__(self, server: TetherServer, token_path: Path) -> None:
        self.server = server
        self.token_path = token_path
        self.ended: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self.serving = False
        self.knocking = 0  # connections that have not proved themselves yet

    async def connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        served = False
        try:
            frames = Frames(reader, FIRST_MESSAGE_BYTES)
            if (first := await self._knock(frames, reader, writer, peer)) is None:
                return
            served = self.serving = True
            log.info("serving %s", peer)
            frames.limit = MAX_MESSAGE_BYTES
            self.server.protocol.set_writer(writer)
            server = self.server
            code = await pump(
                frames, server.protocol, first, server.before_exit, server.build_service
            )
            self._end(code)
        except ConnectionError as exc:
            log.info("%s: %s", peer, exc)
            if served:
                self._end(0)
        except asyncio.CancelledError:
            # The server is ending (Ctrl-C). Python 3.11's streams log a handler that ends
            # cancelled as an error, with a traceback: end it plainly instead.
            return
        finally:
            writer.close()

    def _end(self, code: int) -> None:
        if not self.ended.done():
            self.ended.set_result(code)

    async def _knock(
        self,
        frames: Frames,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        peer: Any,
    ) -> dict[str, Any] | None:
        """The connection's ``initialize`` if it may come in; else None, once it has been
        answered why not."""
        verdict: dict[str, Any] | Rejected | None
        if self.knocking >= MAX_KNOCKING:
            verdict = Rejected(INVALID_REQUEST, "too many connections at once; try again")
        else:
            self.knocking += 1
            try:
                async with asyncio.timeout(FIRST_MESSAGE_S):
                    verdict = await self._first(frames)
            except TimeoutError:
                verdict = Rejected(INVALID_REQUEST, f"no `initialize` in {FIRST_MESSAGE_S:g} s")
            finally:
                self.knocking -= 1
        if isinstance(verdict, dict) and self.serving:
            verdict = Rejected(
                INVALID_REQUEST,
                "this tether server already serves a client; start another one",
                request_id(verdict),
            )
        if isinstance(verdict, Rejected):
            log.info("refused a connection from %s: %s", peer, verdict.message)
            await _refuse(reader, writer, verdict)
            return None
        return verdict

    async def _first(self, frames: Frames) -> dict[str, Any] | Rejected | None:
        """The connection's ``initialize``, its token taken out; else why not."""
        item = await frames.next()
        if item is None:
            return None
        message = item if isinstance(item, Rejected) else decode(item)
        if isinstance(message, Rejected):
            return message
        msg_id = request_id(message)
        if not isinstance(message, dict) or msg_id is None or message["method"] != "initialize":
            return Rejected(SERVER_NOT_INITIALIZED, f"tether: {_HOW}", msg_id)
        given = _take_token(message)
        expected = _read_token(self.token_path)
        if expected is None:
            log.error("cannot read the token in %s: refusing every connection", self.token_path)
        matches = isinstance(given, str) and hmac.compare_digest(
            given.encode("utf-8", "surrogatepass"), expected or secrets.token_bytes(32)
        )
        if not matches or expected is None:
            return Rejected(INVALID_REQUEST, f"tether: unauthorized: {_HOW}", msg_id)
        return message


def _take_token(message: dict[str, Any]) -> Any:
    """``params.initializationOptions.tether.token``, removed from the message."""
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    tether = options.get("tether") if isinstance(options, dict) else None
    return tether.pop("token", None) if isinstance(tether, dict) else None


async def _refuse(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, rejected: Rejected
) -> None:
    """Answer, then hang up once the client has read it (what it still sends is dropped:
    closing with unread bytes would reset the connection and could lose the answer)."""
    with contextlib.suppress(ConnectionError, TimeoutError):
        async with asyncio.timeout(LINGER_S):
            writer.write(rejected.answer())
            await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
            while await reader.read(CHUNK):
                pass


def serve_tcp(server: TetherServer, address: Address, state_dir: Path) -> int:
    """Listen, print where and the token file's path to stderr, serve one client."""
    token_path = token_file(state_dir)

    async def listen() -> int:
        reap_without_threads()
        door = Door(server, token_path)
        listener = await asyncio.start_server(door.connection, address.hosts, address.port)
        host, port = listener.sockets[0].getsockname()[:2]
        shown = f"[{host}]" if ":" in host else host
        print(f"listening on {shown}:{port}", file=sys.stderr)
        print(f"token file: {token_path}", file=sys.stderr, flush=True)
        try:
            code = await door.ended
        finally:
            listener.close()
        return await ended(server, code)

    try:
        return asyncio.run(listen())
    except KeyboardInterrupt:
        return INTERRUPTED
