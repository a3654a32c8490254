"""End-to-end harness: a pytest-lsp client drives a real ``tether serve`` over stdio,
against the loopback provider stub, in a real temporary workspace."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities
from pytest_lsp.client import LanguageClient, make_test_lsp_client

from tests.support.provider_stub import ProviderStub

SERVER = [sys.executable, "-m", "tether", "serve"]
API_KEY = "sk-test-e2e-secret-0123456789"


def plain(value: Any) -> Any:
    """Custom-notification params arrive as namedtuples: make them JSON-like again."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


class Editor:
    """One editor session against one ``tether serve`` process."""

    def __init__(self, client: LanguageClient, workspace: Path) -> None:
        self.client = client
        self.workspace = workspace
        self.updates: list[dict[str, Any]] = []
        self.update_event = asyncio.Event()
        self.answers: list[str | None] = []  # dialog answers, in order; none left: dismiss
        self.dialogs: list[str] = []  # the messages of the dialogs shown
        self.dialog_actions: list[list[str]] = []  # and the actions each offered
        self.hold_dialogs = False  # leave dialogs open until the server takes them back
        self.texts: dict[str, tuple[int, str]] = {}  # open documents: uri -> (version, text)
        self.edits: list[types.ApplyWorkspaceEditParams] = []

    async def on_dialog(self, params: types.ShowMessageRequestParams) -> Any:
        self.dialogs.append(params.message)
        self.dialog_actions.append([action.title for action in params.actions or []])
        if self.hold_dialogs:
            await asyncio.Event().wait()
        title = self.answers.pop(0) if self.answers else None
        return None if title is None else types.MessageActionItem(title=title)

    def on_apply_edit(self, params: types.ApplyWorkspaceEditParams) -> Any:
        """Apply a versioned edit to an open document, as an editor would, and sync it back."""
        self.edits.append(params)
        for change in params.edit.document_changes or []:
            assert isinstance(change, types.TextDocumentEdit)
            uri = change.text_document.uri
            version, text = self.texts[uri]
            if change.text_document.version != version:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="version")
            for edit in sorted(
                change.edits, key=lambda e: offset(text, e.range.start), reverse=True
            ):
                assert isinstance(edit, types.TextEdit | types.AnnotatedTextEdit)  # no snippets
                start, end = offset(text, edit.range.start), offset(text, edit.range.end)
                text = text[:start] + edit.new_text + text[end:]
            self.change(uri, text)
        return types.ApplyWorkspaceEditResult(applied=True)

    def change(self, uri: str, text: str) -> None:
        version = self.texts[uri][0] + 1
        self.texts[uri] = (version, text)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    async def command(self, name: str, *arguments: Any, msg_id: str | None = None) -> Any:
        params = types.ExecuteCommandParams(command=name, arguments=list(arguments))
        return await self.client.protocol.send_request_async(
            types.WORKSPACE_EXECUTE_COMMAND, params, msg_id=msg_id
        )

    async def run(self, prompt: str, session: str | None = None) -> dict[str, Any]:
        argument: dict[str, Any] = {"prompt": prompt}
        if session is not None:
            argument["session"] = session
        return dict(await self.command("tether.run", argument))

    async def history(self, session: str) -> dict[str, Any]:
        return dict(await self.command("tether.history", {"session": session}))

    def open(self, relative: str, text: str, version: int = 1) -> str:
        uri = (self.workspace / relative).as_uri()
        self.texts[uri] = (version, text)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="plaintext", version=version, text=text
                )
            )
        )
        return uri

    def progress_of(self, prompt: str) -> Any:
        """The token of the progress that reports this prompt's turn, once it has begun
        (beside it there may be others: the index's build)."""
        for token, reports in list(self.client.progress_reports.items()):
            # pytest-lsp keeps each report's value (typed there as the whole ProgressParams).
            begin: object = reports[0] if reports else None
            if isinstance(begin, types.WorkDoneProgressBegin) and begin.message == prompt[:80]:
                return token
        return None

    async def wait_for_update(self, predicate: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        async with asyncio.timeout(20):
            while True:
                for update in self.updates:
                    if predicate(update):
                        return update
                self.update_event.clear()
                await self.update_event.wait()

    def kill(self) -> None:
        """kill -9 the server: no shutdown, no cleanup, like a crash."""
        process = self.client._server
        assert process is not None
        if sys.platform == "win32":
            process.kill()
        else:
            os.kill(process.pid, signal.SIGKILL)


def offset(text: str, position: types.Position) -> int:
    """An LSP position (UTF-16 units) as a string offset."""
    lines = text.split("\n")
    start = sum(len(line) + 1 for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, char in enumerate(line):
        if units >= position.character:
            return start + index
        units += 2 if ord(char) > 0xFFFF else 1
    return start + len(line)


def prefer_code_actions(client: LanguageClient) -> None:
    """lsprotocol structures a CodeAction that carries a command as a bare Command on the
    client side; a code action is whatever has more than a command's fields."""
    converter = client.protocol._converter

    def structure(value: Any, _: Any) -> types.Command | types.CodeAction:
        if isinstance(value.get("command"), str):
            return converter.structure(value, types.Command)
        return converter.structure(value, types.CodeAction)

    converter.register_structure_hook(types.Command | types.CodeAction, structure)
    union = typing.Union[types.Command, types.CodeAction]  # noqa: UP007 (cattrs tells them apart)
    converter.register_structure_hook(union, structure)


def server_env(stub: ProviderStub, home: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("TETHER_") and k not in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")
    }
    env.update(
        TETHER_BASE_URL=stub.url,
        TETHER_MODEL="stub-model",
        TETHER_API_KEY=API_KEY,
        TETHER_HOME=str(home),
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


StartEditor = Callable[..., Awaitable[Editor]]


async def launch(
    workspace: Path,
    env: dict[str, str],
    capabilities: str = "visual-studio-code",
    options: dict[str, Any] | None = None,
    client_name: str | None = None,
) -> Editor:
    """Start ``tether serve`` and initialize it like an editor would (``client_name``: the
    ``clientInfo`` it names itself by)."""
    client = make_test_lsp_client()
    prefer_code_actions(client)
    editor = Editor(client, workspace)

    @client.feature("tether/update")
    def on_update(params: Any) -> None:
        editor.updates.append(plain(params))
        editor.update_event.set()

    @client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
    async def on_dialog(params: types.ShowMessageRequestParams) -> Any:
        return await editor.on_dialog(params)

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def on_apply_edit(params: types.ApplyWorkspaceEditParams) -> Any:
        return editor.on_apply_edit(params)

    await client.start_io(*SERVER, env=env)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(capabilities),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
            initialization_options=options,
            client_info=types.ClientInfo(name=client_name) if client_name else None,
        )
    )
    return editor


async def close(editor: Editor) -> None:
    """Shut the server down as an editor does; one that does not go quietly is killed."""
    process = editor.client._server
    if process is not None and process.returncode is None:
        try:
            async with asyncio.timeout(10):
                await editor.client.shutdown_session()
        except (TimeoutError, RuntimeError, ConnectionError):
            editor.kill()
    await editor.client.stop()


@pytest.fixture
async def editors() -> AsyncIterator[list[Editor]]:
    """Editors a test started itself (with a client of its own); each is closed after."""
    started: list[Editor] = []
    yield started
    for editor in started:
        await close(editor)


@pytest.fixture
async def start_editor(
    stub: ProviderStub, workspace: Path, home: Path
) -> AsyncIterator[StartEditor]:
    """Start ``tether serve`` and initialize it like an editor; several may run in turn."""
    editors: list[Editor] = []

    async def start(
        capabilities: str = "visual-studio-code",
        options: dict[str, Any] | None = None,
        env: dict[str, str] | None = None,
        client_name: str | None = None,
    ) -> Editor:
        server = env or server_env(stub, home)
        editor = await launch(workspace, server, capabilities, options, client_name)
        editors.append(editor)
        return editor

    yield start
    for editor in editors:
        await close(editor)
