"""End-to-end harness: a pytest-lsp client drives a real ``tether serve`` over stdio,
against the loopback provider stub, in a real temporary workspace."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
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
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id="plaintext", version=version, text=text
                )
            )
        )
        return uri

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


@pytest.fixture
def stub() -> Iterator[ProviderStub]:
    with ProviderStub() as running:
        yield running


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "tether-home"


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
    ) -> Editor:
        client = make_test_lsp_client()
        editor = Editor(client, workspace)

        @client.feature("tether/update")
        def on_update(params: Any) -> None:
            editor.updates.append(plain(params))
            editor.update_event.set()

        await client.start_io(*SERVER, env=env or server_env(stub, home))
        await client.initialize_session(
            types.InitializeParams(
                capabilities=client_capabilities(capabilities),
                root_uri=workspace.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="ws")],
                initialization_options=options,
            )
        )
        editors.append(editor)
        return editor

    yield start
    for editor in editors:
        process = editor.client._server
        if process is not None and process.returncode is None:
            try:
                async with asyncio.timeout(10):
                    await editor.client.shutdown_session()
            except (TimeoutError, RuntimeError, ConnectionError):
                editor.kill()
        await editor.client.stop()
