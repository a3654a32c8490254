"""What the LSP front takes from ``initialize`` (``lsp/server.py``), and what it loads
before answering it (``lsp/deferred.py``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tether import contract
from tether.lsp import commands, deferred
from tether.lsp.framing import frame
from tether.lsp.server import _workspace_root, create_server


def params(**given: Any) -> types.InitializeParams:
    return types.InitializeParams(capabilities=types.ClientCapabilities(), **given)


def test_the_workspace_is_the_first_folder_else_the_root(tmp_path: Path) -> None:
    folder = types.WorkspaceFolder(uri=(tmp_path / "a").as_uri(), name="a")

    assert _workspace_root(params(workspace_folders=[folder])) == tmp_path / "a"
    assert _workspace_root(params(root_uri=(tmp_path / "b").as_uri())) == tmp_path / "b"
    assert _workspace_root(params(root_path=str(tmp_path / "c"))) == tmp_path / "c"
    assert _workspace_root(params()) == Path.cwd()


def test_a_root_whose_path_holds_a_nul_names_no_folder(tmp_path: Path) -> None:
    hostile = types.WorkspaceFolder(uri="file:///tmp/a%00b", name="nul")

    chosen = _workspace_root(
        params(workspace_folders=[hostile], root_uri="file:///tmp/%00", root_path=str(tmp_path))
    )

    assert chosen == tmp_path


def test_initialize_is_answered_before_pydantic_the_settings_or_the_commands_load(
    tmp_path: Path,
) -> None:
    """The editor's handshake waits for pygls alone (issue 19's start-up row): ``tether
    serve``, started as an editor starts it, has loaded none of them when ``initialize``
    is answered, and loads them all before the next message."""
    wrapper = textwrap.dedent(
        """
        import runpy, sys
        from tether.lsp.server import TetherServer

        heavy = ("pydantic", "tether.config", "tether.models", "tether.lsp.commands")
        build = TetherServer.build_service

        def recorded(self):
            loaded = [name for name in heavy if name in sys.modules]
            build(self)
            after = [name for name in heavy if name in sys.modules]
            print("before:", loaded, "after:", after, file=sys.stderr, flush=True)

        TetherServer.build_service = recorded
        sys.argv = ["tether", "serve"]
        runpy.run_module("tether", run_name="__main__")
        """
    )
    folder = tmp_path.as_uri()
    messages: list[dict[str, Any]] = [
        {"id": 1, "method": "initialize", "params": {"capabilities": {}, "rootUri": folder}},
        {"id": 2, "method": "shutdown"},
        {"method": "exit"},
    ]
    stdin = b"".join(frame({"jsonrpc": "2.0", **message}) for message in messages)
    env = {**os.environ, "TETHER_HOME": str(tmp_path / "home")}
    ended = subprocess.run(
        [sys.executable, "-c", wrapper], input=stdin, capture_output=True, env=env, timeout=60
    )
    said = ended.stderr.decode(errors="replace")
    assert ended.returncode == 0, said
    assert "before: [] after: ['pydantic', 'tether.config', 'tether.models', " in said, said
    answer = json.loads(ended.stdout.split(b"\r\n\r\n", 1)[1].split(b"Content-Length")[0])
    assert answer["id"] == 1 and set(
        answer["result"]["capabilities"]["executeCommandProvider"]["commands"]
    ) == set(deferred.NAMES)


def test_every_command_of_the_contract_has_its_stand_in() -> None:
    assert set(deferred.NAMES) == {name for name, _ in commands.COMMANDS}
    assert set(deferred.NAMES) == set(contract.COMMANDS)
    assert len(deferred.NAMES) == len(set(deferred.NAMES))


async def test_a_command_before_the_handlers_load_says_the_server_is_not_ready() -> None:
    server = create_server()
    stand_in = server.protocol.fm.commands["tether.sessions"]

    with pytest.raises(JsonRpcInvalidParams, match="not initialized yet"):
        await stand_in(server, {})
