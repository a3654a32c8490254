"""The editor's open documents, as the tools' ``Documents`` seam: reads see unsaved text."""

from __future__ import annotations

from pathlib import Path

from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace


class LspDocuments:
    """Reads see the editor's open documents, unsaved edits included."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._paths: dict[str, Path | None] = {}  # uri -> resolved path, once per open uri

    def _open(self) -> dict[Path, TextDocument]:
        """The open documents by resolved path. Reads ask this for every file they touch,
        so a document's path is resolved (a few system calls) once, not on each ask."""
        documents: dict[Path, TextDocument] = {}
        known, self._paths = self._paths, {}  # closed documents are forgotten
        for uri, document in self.workspace.text_documents.items():
            path = known[uri] if uri in known else _file(uri)
            self._paths[uri] = path
            if path is not None:
                documents[path] = document
        return documents

    def document(self, path: Path) -> TextDocument | None:
        try:
            resolved = path.resolve()
        except (OSError, ValueError, RuntimeError):  # a path that names no file: not open
            return None
        return self._open().get(resolved)

    def live_text(self, path: Path) -> str | None:
        document = self.document(path)
        return document.source if document is not None else None

    def open_paths(self) -> list[Path]:
        return list(self._open())

    def unsaved(self) -> list[Path]:
        """Open documents whose text is not what their file holds: a command, which sees
        the disk, would not see the editor's text of these."""
        return [path for path, document in self._open().items() if _differs(path, document)]


def _differs(path: Path, document: TextDocument) -> bool:
    try:
        on_disk = path.read_bytes()
    except OSError:
        return True  # no file yet, or none to read: the text lives in the editor only
    return on_disk != document.source.encode("utf-8", "surrogateescape")


def _file(uri: str) -> Path | None:
    """The file a document's URI names, resolved; None for a document that is no file on
    disk (another scheme, a NUL in the path, a symlink loop): reads never see those."""
    if (path := to_fs_path(uri)) is None:
        return None
    try:
        return Path(path).resolve()
    except (OSError, ValueError, RuntimeError):  # ValueError: NUL; RuntimeError: a loop
        return None
