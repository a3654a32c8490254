"""The read loop (``lsp/serving.py``) hands messages to a real pygls protocol through its
public parts, and answers what pygls is not handed. A pygls release that changes those
parts (``structure_message``, ``handle_message``, ``exit`` ending the loop with
``SystemExit``) fails here."""

from __future__ import annotations

import json
from typing import Any

from pygls.lsp.server import LanguageServer

from tests.unit.lsp.test_framing import Pieces
from tether.lsp.framing import Frames, frame
from tether.lsp.serving import pump


class Writer:
    def __init__(self) -> None:
        self.written = b""
        self.closed = False

    def write(self, data: bytes) -> None:
        self.written += data

    def close(self) -> None:
        self.closed = True

    def messages(self) -> list[dict[str, Any]]:
        found, rest = [], self.written
        while rest:
            head, _, rest = rest.partition(b"\r\n\r\n")
            length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            found.append(json.loads(rest[:length]))
            rest = rest[length:]
        return found


def request(msg_id: Any, method: str, params: Any = None) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}


async def serve(*stream: bytes, first: Any = None) -> tuple[int, Writer]:
    server = LanguageServer("test", "1")
    writer = Writer()
    server.protocol.set_writer(writer)
    code = await pump(Frames(Pieces(*stream)), server.protocol, first)
    return code, writer


async def test_a_request_reaches_pygls_and_its_answer_comes_back() -> None:
    code, writer = await serve(frame(INITIALIZE))

    (answer,) = writer.messages()
    assert code == 0 and answer["id"] == 1 and "capabilities" in answer["result"]


async def test_the_first_message_is_handled_before_the_stream() -> None:
    _, writer = await serve(request(2, "shutdown"), first=dict(INITIALIZE))

    assert [m["id"] for m in writer.messages()] == [1, 2]


async def test_a_request_whose_params_do_not_fit_is_answered_with_its_id() -> None:
    _, writer = await serve(frame(INITIALIZE), request(7, "textDocument/hover", {"x": 1}))

    answer = writer.messages()[-1]
    assert answer["id"] == 7 and answer["error"]["code"] == -32602
    assert answer["error"]["message"].startswith("textDocument/hover: ")


async def test_what_is_no_json_rpc_message_is_answered_invalid_request() -> None:
    _, writer = await serve(
        b"Content-Length: 2\r\n\r\n[]",
        frame({"id": 5, "method": "initialize"}),  # no "jsonrpc"
        b"Content-Length: 5\r\n\r\n{oops",
    )

    assert [(m["id"], m["error"]["code"]) for m in writer.messages()] == [
        (None, -32600),
        (5, -32600),
        (None, -32700),
    ]


async def test_exit_ends_the_loop_with_pyglss_exit_code() -> None:
    exit_ = frame({"jsonrpc": "2.0", "method": "exit"})
    after_shutdown, writer = await serve(frame(INITIALIZE), request(2, "shutdown"), exit_)
    without, _ = await serve(frame(INITIALIZE), exit_, request(3, "shutdown"))

    assert after_shutdown == 0 and writer.closed
    assert without == 1  # LSP: `exit` without `shutdown` first
