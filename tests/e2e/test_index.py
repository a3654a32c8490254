"""The workspace index, end to end: built after `initialized` with a `$/progress`, kept
fresh by the editor's file watcher (registered dynamically), and brought up to date at
the next start by reading only what changed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import client_capabilities
from pytest_lsp.client import make_test_lsp_client

from tests.e2e.conftest import SERVER, Editor, close, server_env
from tests.support.provider_stub import ProviderStub, text, tool_calls


class Watching(Editor):
    registrations: list[types.Registration]


async def launch(workspace: Path, env: dict[str, str]) -> Watching:
    """An editor that accepts the watcher's registration (it tells a change only when a
    test sends one) and answers dialogs from ``answers``."""
    client = make_test_lsp_client()
    editor = Watching(client, workspace)
    editor.registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        editor.registrations += params.registrations

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_dialog(params: types.ShowMessageRequestParams) -> object:
        return await editor.on_dialog(params)

    await client.start_io(*SERVER, env=env)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
        )
    )
    return editor


async def indexed(editor: Editor) -> list[Any]:
    """The index's progress, once it has ended."""
    async with asyncio.timeout(30):
        while True:
            for token, reports in editor.client.progress_reports.items():
                if str(token).startswith("tether-index-") and any(
                    isinstance(r, types.WorkDoneProgressEnd) for r in reports
                ):
                    return reports
            await asyncio.sleep(0.05)


async def grep(editor: Editor, stub: ProviderStub, pattern: str) -> str:
    stub.script(tool_calls(("index-grep", {"pattern": pattern})), text("ok"))
    await editor.run("search")
    answers = [m for m in stub.requests[-1]["messages"] if m["role"] == "tool"]
    return str(answers[-1]["content"])


async def test_the_index_answers_once_built_and_follows_the_watchers_changes(
    editors: list[Editor], stub: ProviderStub, workspace: Path, home: Path
) -> None:
    (workspace / "a.py").write_text("old_marker_q = 1\n")
    editor = await launch(workspace, server_env(stub, home))
    editors.append(editor)
    progress = await indexed(editor)
    assert isinstance(progress[0], types.WorkDoneProgressBegin)
    assert [r.method for r in editor.registrations] == [types.WORKSPACE_DID_CHANGE_WATCHED_FILES]
    assert list((home / "index").glob("*.sqlite3"))
    assert "a.py:1: old_marker_q = 1" in await grep(editor, stub, "old_marker_q")

    # A file written behind the watcher's back: the index, which answers, has not seen it.
    (workspace / "b.py").write_text("new_marker_q = 2\n")
    assert "no matches" in await grep(editor, stub, "new_marker_q")
    editor.client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[
                types.FileEvent(
                    uri=(workspace / "b.py").as_uri(), type=types.FileChangeType.Created
                )
            ]
        )
    )
    assert "b.py:1: new_marker_q = 2" in await grep(editor, stub, "new_marker_q")


async def test_at_the_next_start_only_what_changed_is_read(
    editors: list[Editor], stub: ProviderStub, workspace: Path, home: Path
) -> None:
    for n in range(5):
        (workspace / f"f{n}.py").write_text(f"value_{n} = {n}\n")
    first = await launch(workspace, server_env(stub, home))
    editors.append(first)
    assert "5/5 files read" in [getattr(r, "message", None) for r in await indexed(first)]
    await close(editors.pop())

    (workspace / "f3.py").write_text("value_3 = 'changed while tether was away'\n")
    again = await launch(workspace, server_env(stub, home))
    editors.append(again)
    assert "1/1 files read" in [getattr(r, "message", None) for r in await indexed(again)]
    assert "f3.py:1: value_3 = 'changed" in await grep(again, stub, "changed while tether")


async def test_a_workspace_read_by_worker_processes_answers_through_a_clean_stream(
    editors: list[Editor], stub: ProviderStub, workspace: Path, home: Path
) -> None:
    """Past ``FROM_FILES`` files the build and the definitions run in worker processes,
    which inherit the server's standard output: a byte of theirs there would break the
    editor's stream."""
    from tether.index.workers import FROM_FILES

    for n in range(FROM_FILES + 10):
        (workspace / f"pkg{n % 20}").mkdir(exist_ok=True)
        (workspace / f"pkg{n % 20}" / f"m{n}.py").write_text(f"def handler_{n}():\n    pass\n")
    editor = await launch(workspace, server_env(stub, home))
    editors.append(editor)
    progress = await indexed(editor)
    assert progress[-1].message == f"indexed {FROM_FILES + 10} files"
    assert "pkg17/m1777.py:1: def handler_1777():" in await grep(editor, stub, "handler_1777")
    stub.script(tool_calls(("index-symbols", {"query": "handler_2001"})), text("ok"))
    await editor.run("where is it defined")
    answer = [m for m in stub.requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert answer["content"] == "pkg1/m2001.py:1: function handler_2001"
