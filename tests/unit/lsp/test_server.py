"""What the LSP front takes from ``initialize`` (``lsp/server.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsprotocol import types

from tether.lsp.server import _workspace_root


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
