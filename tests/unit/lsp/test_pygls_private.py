"""The private parts of pygls that tether wraps (lsp/pygls_private.py): each test fails if a
pygls release moves or changes one, before a person meets the breakage."""

from __future__ import annotations

import inspect
import json
import sys
from typing import Any

import pytest
from lsprotocol import types
from pygls.client import JsonRPCClient
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.client import LanguageClient
from pygls.lsp.server import LanguageServer
from pygls.protocol import JsonRPCProtocol, LanguageServerProtocol

from tether.lsp.pygls_private import (
    AnsweredErrors,
    OwnCancels,
    forget_request,
    send_as_given,
    server_process,
    shutdown_answered,
)


class Writer:
    def __init__(self) -> None:
        self.written: list[bytes] = []

    def close(self) -> None:
        pass

    def write(self, data: bytes) -> None:
        self.written.append(data)


def test_pygls_still_routes_cancel_requests_through_the_hook_tether_overrides() -> None:
    source = inspect.getsource(JsonRPCProtocol._handle_notification)
    assert "self._handle_cancel_notification(params.id)" in source
    assert list(inspect.signature(OwnCancels._handle_cancel_notification).parameters) == [
        "self",
        "msg_id",
    ]


def test_a_cancel_the_server_does_not_take_goes_to_pygls() -> None:
    server = LanguageServer("t", "1", protocol_cls=OwnCancels)
    protocol = server.protocol
    assert isinstance(protocol, OwnCancels)
    taken: list[Any] = []

    def take(msg_id: Any) -> bool:
        taken.append(msg_id)
        return bool(msg_id == "mine")

    protocol.take_cancel = take
    protocol._handle_cancel_notification("mine")
    protocol._handle_cancel_notification("theirs")  # pygls logs an unknown id, no raise
    assert taken == ["mine", "theirs"]


def test_a_question_taken_back_leaves_no_future_waiting() -> None:
    server = LanguageServer("t", "1")
    protocol = server.protocol
    protocol.set_writer(Writer())
    protocol.send_request("window/showMessageRequest", None, msg_id="tether-ask-1")
    assert "tether-ask-1" in protocol._request_futures

    forget_request(protocol, "tether-ask-1")

    assert "tether-ask-1" not in protocol._request_futures


async def test_a_request_sent_as_given_keeps_what_its_lsprotocol_type_does_not_name() -> None:
    server = LanguageServer("t", "1")
    protocol = server.protocol
    writer = Writer()
    protocol.set_writer(writer)
    params = {"type": 2, "message": "m", "actions": [{"title": "Allow", "call_id": "c1"}]}

    answer = send_as_given(protocol, "window/showMessageRequest", params, "tether-ask-2")

    body = json.loads(writer.written[-1].split(b"\r\n\r\n", 1)[1])
    assert body["params"] == params and body["id"] == "tether-ask-2"
    assert "tether-ask-2" in protocol._request_futures
    answer.cancel()


async def test_the_process_a_client_started_is_where_tether_looks_for_it() -> None:
    client = LanguageClient("t", "1")
    assert isinstance(client, JsonRPCClient) and server_process(client) is None
    await client.start_io(sys.executable, "-c", "import sys; sys.stdin.read()")
    process = server_process(client)
    assert process is not None and process.returncode is None
    process.kill()
    await process.wait()
    await client.stop()


def test_pygls_marks_shutdown_done_as_it_answers_it() -> None:
    server = LanguageServer("t", "1")
    protocol = server.protocol
    writer = Writer()
    protocol.set_writer(writer)
    assert not shutdown_answered(protocol)

    request = {"jsonrpc": "2.0", "id": 1, "method": "shutdown", "params": None}
    protocol.handle_message(protocol.structure_message(request))

    assert shutdown_answered(protocol)
    assert b'"id": 1' in b"".join(writer.written)  # answered by the time the mark is set


def test_an_error_that_answers_a_request_is_not_logged_with_a_traceback_but_a_bug_is(
    caplog: Any,
) -> None:
    """pygls logs what a handler raises at `protocol/json_rpc.py`; its answer already went."""
    import logging

    from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

    logger = logging.getLogger(JsonRPCProtocol.__module__)
    assert logger.name == "pygls.protocol.json_rpc"
    quiet = AnsweredErrors()
    logger.addFilter(quiet)
    try:
        for error in (
            JsonRpcInvalidParams("a turn is already running"),
            JsonRpcInternalError("bug"),
        ):
            try:
                raise error
            except Exception:
                logger.exception('Exception occurred for message "%s"', 1)
    finally:
        logger.removeFilter(quiet)
    assert [r.exc_info[1] for r in caplog.records if r.exc_info] == [error]


def test_pygls_still_handles_execute_command_with_the_builtin_tether_extends() -> None:
    """``COMMAND_PROGRESS`` is set by overriding pygls's built-in generator for
    ``workspace/executeCommand``; the override is the one registered."""
    builtin = LanguageServerProtocol.lsp_workspace__execute_command
    assert inspect.isgeneratorfunction(builtin)
    assert getattr(builtin, "method_name", None) == types.WORKSPACE_EXECUTE_COMMAND
    server = LanguageServer("t", "0", protocol_cls=OwnCancels)
    registered = server.protocol.fm.builtin_features[types.WORKSPACE_EXECUTE_COMMAND]
    assert registered.__func__ is OwnCancels.lsp_workspace__execute_command


def test_a_command_is_handed_its_arguments_as_the_client_sent_them() -> None:
    """pygls would structure them by the handler's type hints (here: "1" to 1), read
    again at every command; tether's commands validate their own argument."""
    server = LanguageServer("t", "0", protocol_cls=OwnCancels)

    @server.command("t.hinted")
    async def hinted(ls: LanguageServer, arg: dict[str, int]) -> None:
        pass

    sent = types.ExecuteCommandParams(command="t.hinted", arguments=[{"a": "1"}])
    handler, args, kwargs = next(server.protocol.lsp_workspace__execute_command(sent))
    assert handler is server.protocol.fm.commands["t.hinted"]
    assert args == ({"a": "1"},) and not kwargs
    bare = types.ExecuteCommandParams(command="t.hinted")
    assert next(server.protocol.lsp_workspace__execute_command(bare))[1] == ()


def test_an_unknown_command_is_invalid_params_as_pygls_says_it() -> None:
    server = LanguageServer("t", "0", protocol_cls=OwnCancels)
    unknown = types.ExecuteCommandParams(command="t.nope", arguments=[])
    with pytest.raises(JsonRpcInvalidParams, match=r"Command name 't\.nope' is not defined"):
        next(server.protocol.lsp_workspace__execute_command(unknown))
