"""The read loop (``lsp/serving.py``) hands messages to a real pygls protocol through its
public parts, and answers what pygls is not handed. A pygls release that changes those
parts (``structure_message``, ``handle_message``, ``exit`` ending the loop with
``SystemExit``) fails here."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from typing import Any

from pygls.lsp.server import LanguageServer

from tests.unit.lsp.test_framing import Pieces
from tether.lsp.framing import Frames, frame
from tether.lsp.pygls_private import OwnCancels
from tether.lsp.server import create_server
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


async def test_after_initialize_runs_once_its_answer_is_out_and_before_the_next_message() -> None:
    """How tether answers `initialize` before importing and building its agent: the
    service is built then, and nothing after `initialize` is handled without it."""
    server = LanguageServer("test", "1")
    writer = Writer()
    server.protocol.set_writer(writer)
    seen: list[list[Any]] = []

    def after() -> None:
        seen.append([m["id"] for m in writer.messages()])

    stream = Pieces(
        request(1, "textDocument/hover", {}),  # refused: before `initialize`
        frame(INITIALIZE),
        request(2, "shutdown"),
        request(3, "shutdown"),
    )
    await pump(Frames(stream), server.protocol, after_initialize=after)

    assert seen == [[1, 1]]  # the refusal, then the answer to `initialize`; once
    assert [m["id"] for m in writer.messages()] == [1, 1, 2, 3]


# What the LSP fuzz campaign found (seed 20261201, `python -m tests.reliability lsp-fuzz`),
# each as its minimal reproduction: before the fix, pygls answered it not at all, with an
# internal error, or carried it out.


def notification(method: str, params: Any = None) -> bytes:
    return frame({"jsonrpc": "2.0", "method": method, "params": params})


def answers(writer: Writer) -> list[tuple[Any, Any]]:
    """Each answer as (id, error code), or (id, "result")."""
    return [(m["id"], m["error"]["code"] if "error" in m else "result") for m in writer.messages()]


async def test_an_id_that_is_no_integer_or_string_is_answered_invalid_request_with_id_null() -> (
    None
):
    # {"id": -0.0, "method": "textDocument/hover"} went unanswered; {"id": [1], ...} got an
    # internal error; {"id": null, ...} an answer with no id at all
    bad_ids = [True, None, -0.0, 1.5, float("nan"), [1], {"id": 1}]

    _, writer = await serve(
        frame(INITIALIZE), *(request(i, "textDocument/hover", {}) for i in bad_ids)
    )

    assert answers(writer)[1:] == [(None, -32600)] * len(bad_ids)
    assert all(
        "id must be an integer or a string" in m["error"]["message"] for m in writer.messages()[1:]
    )


async def test_a_notification_sent_with_an_id_is_refused_with_its_id_and_not_carried_out() -> None:
    # {"id": 19, "method": "exit", "params": ...} ended the server (code 1); `initialized` and
    # `$/cancelRequest` with an id went unanswered
    code, writer = await serve(
        frame(INITIALIZE),
        request(19, "exit", "9b"),
        request(7, "initialized", {}),
        request(8, "$/cancelRequest", {"id": 1}),
        request(9, "shutdown"),
    )

    assert code == 0 and not writer.closed  # the stream ended; no `exit` was carried out
    assert answers(writer) == [(1, "result"), (19, -32600), (7, -32600), (8, -32600), (9, "result")]
    assert "`exit` is a notification" in writer.messages()[1]["error"]["message"]


async def test_before_initialize_a_request_is_refused_and_a_notification_dropped() -> None:
    # tether.sessions written just before `initialize` ran after it, and got a result
    code, writer = await serve(
        request(2, "shutdown"),
        notification("textDocument/didOpen", {"textDocument": {"uri": "file:///a"}}),
        request(3, "textDocument/hover", {}),
        frame(INITIALIZE),
    )

    assert answers(writer) == [(2, -32002), (3, -32002), (1, "result")]
    assert code == 0


async def test_initialize_is_taken_once() -> None:
    # a second `initialize` built the whole service again
    _, writer = await serve(frame(INITIALIZE), request(2, "initialize", {"capabilities": {}}))

    assert answers(writer) == [(1, "result"), (2, -32600)]
    assert writer.messages()[1]["error"]["message"] == "tether is already initialized"


async def test_after_shutdown_a_request_is_refused_and_exit_still_ends() -> None:
    # requests after `shutdown` went unanswered
    code, writer = await serve(
        frame(INITIALIZE),
        request(2, "shutdown"),
        request(3, "workspace/executeCommand", {"command": "x"}),
        notification("textDocument/didOpen", {}),
        request(4, "shutdown"),
        notification("exit"),
    )

    assert answers(writer) == [(1, "result"), (2, "result"), (3, -32600), (4, -32600)]
    assert code == 0 and writer.closed


async def test_what_is_no_request_notification_or_response_is_answered_invalid_request() -> None:
    # {"method": true, "id": "m68"} got an internal error; {"jsonrpc": "2.0", "params": {}}
    # no answer; a response whose id could not be ours is dropped
    _, writer = await serve(
        frame(INITIALIZE),
        frame({"jsonrpc": "2.0", "method": True, "id": "m68"}),
        frame({"jsonrpc": "2.0", "method": 5}),
        frame({"jsonrpc": "2.0", "params": {}}),
        frame({"jsonrpc": "2.0", "id": [1], "result": 1}),
        frame({"jsonrpc": "2.0", "id": "unknown", "error": {"code": 1, "message": "x"}}),
    )

    assert answers(writer)[1:] == [("m68", -32600), (None, -32600), (None, -32600)]


async def test_a_method_nobody_serves_is_method_not_found_with_params_or_without() -> None:
    # {"id": 5, "method": "x"} without params got an internal error
    huge = "m" * 100_000
    _, writer = await serve(
        frame(INITIALIZE),
        frame({"jsonrpc": "2.0", "id": 5, "method": "x"}),
        request(6, "y", [1]),
        request(7, huge, {}),
    )

    assert answers(writer)[1:] == [(5, -32601), (6, -32601), (7, -32601)]
    assert len(writer.messages()[-1]["error"]["message"]) < 200  # the name is not echoed whole


async def test_handlers_that_ended_leave_nothing_in_pyglss_table_of_running_ones() -> None:
    # each notification left a done future behind for good: about 2 KB, the campaign's
    # steady phase grew by it
    server = LanguageServer("test", "1", protocol_cls=OwnCancels)
    server.protocol.set_writer(Writer())
    uri = {"uri": "file:///a", "languageId": "text", "version": 1, "text": "x"}
    stream = [frame(INITIALIZE), notification("initialized", {})]
    for version in range(2, 100):
        stream.append(notification("textDocument/didOpen", {"textDocument": uri}))
        change = {"textDocument": {"uri": "file:///a", "version": version}, "contentChanges": []}
        stream.append(notification("textDocument/didChange", change))
        stream.append(notification("$/setTrace", {"value": "off"}))

    await pump(Frames(Pieces(*stream)), server.protocol)
    await asyncio.sleep(0)  # a finished handler's future leaves the table on the next turn

    assert server.protocol._request_futures == {}


def test_a_cancel_naming_no_running_request_is_not_remembered() -> None:
    # each cancel was kept (256 of them), whatever the size of the id it named
    server = create_server()

    assert server.cancel_turn_request("x" * 1_000_000) is False
    assert list(server.early_cancels) == []


async def test_a_cancel_whose_id_is_no_integer_or_string_cancels_nothing() -> None:
    # pygls took `{"id": true}` for request 1 (True == 1 as a key) and raised on `[1]`
    server = LanguageServer("test", "1", protocol_cls=OwnCancels)
    writer = Writer()
    server.protocol.set_writer(writer)

    @server.command("slow")
    async def slow(ls: LanguageServer, *args: Any) -> str:
        await asyncio.sleep(0.01)
        return "done"

    initialize = dict(INITIALIZE, id=0)
    running = request(1, "workspace/executeCommand", {"command": "slow", "arguments": []})
    cancels = [notification("$/cancelRequest", {"id": i}) for i in (True, 1.0, [1], {"a": 1})]

    await pump(Frames(Pieces(frame(initialize), running, *cancels)), server.protocol)
    await asyncio.sleep(0.05)

    assert [(m["id"], m.get("result")) for m in writer.messages()][1:] == [(1, "done")]


def test_a_process_whose_end_is_stuck_exits_with_its_code_all_the_same() -> None:
    """The safety net behind the stop: a task that never ends once cancelled (as one
    starting a program did under Python 3.11) holds ``asyncio.run``'s end forever."""
    stuck = textwrap.dedent(
        """
        import asyncio
        from tether.lsp.serving import exit_within

        async def stubborn():
            while True:
                try:
                    await asyncio.sleep(60)
                except asyncio.CancelledError:
                    pass

        async def main():
            asyncio.ensure_future(stubborn())
            await asyncio.sleep(0)
            exit_within(0.2, 7)

        asyncio.run(main())
        """
    )
    ended = subprocess.run([sys.executable, "-c", stuck], capture_output=True, timeout=30)
    assert ended.returncode == 7, ended.stderr
