"""The editor's open documents, as the tools' ``Documents`` seam: reads see unsaved text."""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace


class LspDocuments:
    """Reads see the editor's open documents, unsaved edits included."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._paths: dict[str, Path] = {}  # uri -> resolved path, resolved once per uri

    def _open(self) -> dict[Path, TextDocument]:
        """The open documents by resolved path. Reads ask this for every file they touch,
        so a document's path is resolved (a few system calls) once, not on each ask."""
        documents: dict[Path, TextDocument] = {}
        for uri, document in self.workspace.text_documents.items():
            if (path := self._paths.get(uri)) is None:
                if (fs := to_fs_path(uri)) is None:
                    continue
                path = self._paths[uri] = Path(fs).resolve()
            documents[path] = document
        return documents

    def document(self, path: Path) -> TextDocument | None:
        return self._open().get(path.resolve())

    def live_text(self, path: Path) -> str | None:
        document = self.document(path)
        return document.source if document is not None else None

    def open_paths(self) -> list[Path]:
        return list(self._open())
