"""Patches land in the editor: ``workspace/applyEdit``, versioned, in its undo history."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.workspace import TextDocument

from tether.errors import ToolError
from tether.lsp.documents import LspDocuments
from tether.tools.base import FileEdit

if TYPE_CHECKING:
    from tether.lsp.server import TetherServer

log = logging.getLogger(__name__)


def position(text: str, offset: int, encoding: str) -> types.Position:
    """A string offset as an LSP position, counted in the negotiated encoding's units."""
    line = text.count("\n", 0, offset)
    column = text[text.rfind("\n", 0, offset) + 1 : offset]
    if encoding == types.PositionEncodingKind.Utf8:
        units = len(column.encode("utf-8"))
    elif encoding == types.PositionEncodingKind.Utf32:
        units = len(column)
    else:
        units = len(column.encode("utf-16-le")) // 2
    return types.Position(line=line, character=units)


class LspEditor:
    def __init__(self, ls: TetherServer, documents: LspDocuments) -> None:
        self.ls = ls
        self.documents = documents

    def open_document(self, path: Path) -> TextDocument | None:
        return self.documents.document(path)

    def workspace_edit(self, edit: FileEdit) -> types.WorkspaceEdit | None:
        """The edit for the open document it touches, versioned; None if it is not open."""
        document = self.open_document(edit.path)
        if document is None:
            return None
        encoding = str(self.ls.workspace.position_encoding or types.PositionEncodingKind.Utf16)
        text = document.source
        edits: list[types.TextEdit | types.AnnotatedTextEdit | types.SnippetTextEdit] = [
            types.TextEdit(
                range=types.Range(
                    start=position(text, r.start, encoding), end=position(text, r.end, encoding)
                ),
                new_text=r.new,
            )
            for r in edit.replacements
        ]
        identifier = types.OptionalVersionedTextDocumentIdentifier(
            uri=document.uri, version=document.version
        )
        return types.WorkspaceEdit(
            document_changes=[types.TextDocumentEdit(text_document=identifier, edits=edits)]
        )

    async def apply(self, edit: FileEdit, label: str) -> bool:
        workspace = self.ls.client_capabilities.workspace
        if not (workspace and workspace.apply_edit):
            return False
        document = self.open_document(edit.path)
        if document is None:
            # A closed file stays on disk: an edit there would leave an unsaved buffer that
            # commands and later reads of the disk would not see.
            return False
        if document.source != edit.before:
            raise ToolError(
                f"{edit.path.name} changed in the editor while the patch waited; read it again"
            )
        change = self.workspace_edit(edit)
        params = types.ApplyWorkspaceEditParams(edit=change, label=label) if change else None
        if params is None:
            return False
        try:
            result = await self.ls.workspace_apply_edit_async(params)
        except JsonRpcException as exc:
            raise ToolError(f"the editor could not apply the patch: {exc}") from exc
        if not result.applied:
            reason = result.failure_reason or "no reason given"
            raise ToolError(f"the editor refused the patch: {reason}")
        return True
