"""A turn end to end: LSP in, provider stub out, tools against real files."""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types

from tests.e2e.conftest import API_KEY, StartEditor
from tests.support.provider_stub import ProviderStub, text, tool_calls


async def test_plain_answer_streams_and_is_kept(
    start_editor: StartEditor, stub: ProviderStub, home: Path
) -> None:
    # Pieces further apart than the server coalesces text deltas (16 ms): each is sent.
    stub.script(text("Hello from the model", chunk_size=3, delay_s=0.05))
    editor = await start_editor()

    result = await editor.run("say hello")

    assert result["status"] == "done"
    assert result["answer"] == "Hello from the model"
    deltas = [u["text"] for u in editor.updates if u["kind"] == "text"]
    assert len(deltas) > 1 and "".join(deltas) == "Hello from the model"
    statuses = [u["status"] for u in editor.updates if u["kind"] == "status"]
    assert statuses == ["running", "done"]

    request = stub.requests[0]
    assert request["model"] == "stub-model" and request["stream"] is True
    assert request["messages"][0]["role"] == "system"
    assert str(editor.workspace) in request["messages"][0]["content"]
    assert request["messages"][-1] == {"role": "user", "content": "say hello"}
    assert {t["function"]["name"] for t in request["tools"]} >= {"fs-read", "fs-list"}
    assert stub.headers[0]["authorization"] == f"Bearer {API_KEY}"

    history = await editor.history(result["session"])
    assert [m["role"] for m in history["messages"]] == ["user", "assistant"]
    sessions = (await editor.command("tether.sessions", {}))["sessions"]
    assert [s["id"] for s in sessions] == [result["session"]]
    assert sessions[0]["status"] == "done" and sessions[0]["title"] == "say hello"
    # The key is never stored (and the store is there to look in).
    stored = [f for f in home.rglob("*") if f.is_file()]
    assert any(f.name == "sessions.sqlite3" for f in stored), stored
    assert all(API_KEY.encode() not in f.read_bytes() for f in stored)


async def test_tool_round_trip_sends_the_result_back(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "notes.txt").write_text("alpha\nbeta\n")
    stub.script(tool_calls(("fs-read", {"path": "notes.txt"})), text("It says alpha, beta."))

    result = await editor.run("what is in notes.txt?")

    assert result["status"] == "done" and result["answer"] == "It says alpha, beta."
    second = stub.requests[1]["messages"]
    call = next(m for m in second if m["role"] == "assistant")["tool_calls"][0]
    assert call["function"] == {"name": "fs-read", "arguments": json.dumps({"path": "notes.txt"})}
    answer = next(m for m in second if m["role"] == "tool")
    assert answer["tool_call_id"] == call["id"]
    assert "alpha" in answer["content"] and "beta" in answer["content"]

    kinds = [u["kind"] for u in editor.updates]
    assert kinds.index("tool_call") < kinds.index("tool_result")
    result_update = next(u for u in editor.updates if u["kind"] == "tool_result")
    assert result_update["call_id"] == call["id"] and result_update["status"] == "ok"
    assert result_update["ended_at"] >= result_update["started_at"]

    messages = (await editor.history(result["session"]))["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    tool = messages[2]
    assert tool["status"] == "ok" and tool["call_id"] == call["id"] and tool["tool"] == "fs-read"
    assert tool["started_at"].endswith("Z") and tool["ended_at"] >= tool["started_at"]


async def test_reads_see_the_editors_unsaved_text(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "draft.py").write_text("on_disk = True\n")
    uri = editor.open("draft.py", "in_the_buffer = True\n")
    # An incremental change: only the edited range travels.
    editor.client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=0, character=0),
                        end=types.Position(line=0, character=2),
                    ),
                    text="still",
                )
            ],
        )
    )
    stub.script(tool_calls(("fs-read", {"path": "draft.py"})), text("read it"))

    await editor.run("read draft.py")

    answer = next(m for m in stub.requests[1]["messages"] if m["role"] == "tool")
    assert "still_the_buffer" in answer["content"] and "on_disk" not in answer["content"]


async def test_continuing_a_session_sends_the_whole_transcript(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    stub.script(text("first answer"), text("second answer"))
    first = await editor.run("first question")
    second = await editor.run("second question", session=first["session"])

    assert second["session"] == first["session"] and second["answer"] == "second answer"
    contents = [m["content"] for m in stub.requests[1]["messages"][1:]]
    assert contents == ["first question", "first answer", "second question"]


async def test_serves_over_tcp(stub: ProviderStub, home: Path, workspace: Path) -> None:
    from tests.e2e.test_tcp import tcp_server

    async with tcp_server(stub, home, workspace) as server:
        client = await server.client()  # its initialize carries the token from the file
        stub.script(text("over tcp"))
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="tether.run", arguments=[{"prompt": "hi"}])
        )
        assert result is not None
        assert result["status"] == "done" and result["answer"] == "over tcp"
        await client.shutdown_session()
        assert await server.wait() == 0  # `exit` after `shutdown` ends the server


async def test_did_change_configuration_applies_from_the_next_turn(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    editor.client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"tether": {"turn": {"tool_budget": 1}}})
    )
    stub.script(tool_calls(("fs-read", {"path": "a.txt"}), ("fs-list", {})))

    result = await editor.run("read two things")

    assert result["status"] == "stopped" and "budget of 1" in result["error"]
    history = await editor.history(result["session"])
    assert [m["status"] for m in history["messages"] if m["role"] == "tool"] == [
        "ok",
        "not_executed",
    ]


async def test_token_usage_is_kept_per_request_and_shown_per_turn(
    start_editor: StartEditor, stub: ProviderStub
) -> None:
    editor = await start_editor()
    (editor.workspace / "a.txt").write_text("alpha\n")
    stub.script(tool_calls(("fs-read", {"path": "a.txt"})), text("one"), text("two"))
    first = await editor.run("read")
    await editor.run("again", session=first["session"])

    stats = (await editor.history(first["session"]))["stats"]

    assert stats["requests"] == 3
    assert [t["requests"] for t in stats["turns"]] == [2, 1]
    assert stats["input_tokens"] == sum(t["input_tokens"] for t in stats["turns"]) > 0
    assert stats["output_tokens"] > 0
