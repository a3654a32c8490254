"""The editor's open documents as the reads see them (``lsp/documents.py``): a document that
is no file on disk is skipped, and never breaks the others."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.workspace import Workspace

from tether.lsp.documents import LspDocuments


def open_document(workspace: Workspace, uri: str, text: str) -> None:
    workspace.put_text_document(
        types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
    )


@pytest.mark.parametrize(
    "uri",
    [
        "file:///tmp/x%00y.py",  # a NUL: no path can hold one
        "untitled:Untitled-1",  # another scheme
        "file:///tmp/%00",
    ],
)
def test_a_document_that_is_no_file_is_skipped_and_the_others_are_read(
    tmp_path: Path, uri: str
) -> None:
    workspace = Workspace(tmp_path.as_uri())
    documents = LspDocuments(workspace)
    draft = tmp_path / "draft.py"
    open_document(workspace, uri, "not a file\n")
    open_document(workspace, draft.as_uri(), "in the buffer\n")

    assert documents.live_text(draft) == "in the buffer\n"
    assert documents.open_paths() == [draft.resolve()]
    assert documents.live_text(Path("/tmp/x\x00y.py")) is None  # asked for by a tool


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_a_document_in_a_symlink_loop_is_skipped(tmp_path: Path) -> None:
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    workspace = Workspace(tmp_path.as_uri())
    documents = LspDocuments(workspace)
    open_document(workspace, (tmp_path / "a" / "x.py").as_uri(), "loop\n")
    open_document(workspace, (tmp_path / "ok.py").as_uri(), "fine\n")

    assert documents.live_text(tmp_path / "ok.py") == "fine\n"


def test_a_closed_document_is_forgotten(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path.as_uri())
    documents = LspDocuments(workspace)
    draft = tmp_path / "draft.py"
    open_document(workspace, draft.as_uri(), "text\n")
    assert documents.live_text(draft) == "text\n"

    workspace.remove_text_document(draft.as_uri())

    assert documents.live_text(draft) is None and documents._paths == {}
