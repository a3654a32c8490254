"""Apply a ``WorkspaceEdit`` to files on disk, for a client with no buffers (``tether ask``).

Every change is computed in memory against the original texts first, so a bad
edit refuses the whole ``WorkspaceEdit`` before anything is written; then each
changed file is replaced atomically (a temporary file in its directory, then
``os.replace``). Positions count code units of the negotiated encoding, UTF-16
by default; text edits of one document all refer to its text before any of them.
Creating files is supported; renames and deletes are refused.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from lsprotocol import types
from pygls.uris import to_fs_path

from tether.errors import EditRefused

PlainEdit = types.TextEdit | types.AnnotatedTextEdit
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class Lines:
    """A text with its line starts, to turn LSP positions into string offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]

    def offset(self, position: types.Position, encoding: str = "utf-16") -> int:
        """The string index of ``position``; past a line's end means its end."""
        if position.line >= len(self.starts):
            return len(self.text)
        start = self.starts[position.line]
        end = self.starts[position.line + 1] if position.line + 1 < len(self.starts) else None
        line = self.text[start:end].rstrip("\r\n")
        if encoding == "utf-32":
            return start + min(position.character, len(line))
        units = index = 0
        while index < len(line) and units < position.character:
            units += _width(ord(line[index]), encoding)
            index += 1
        return start + index


def _width(code: int, encoding: str) -> int:
    if encoding == "utf-8":
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 2 if code > 0xFFFF else 1


def apply_text_edits(text: str, edits: Sequence[PlainEdit], encoding: str = "utf-16") -> str:
    """``text`` with ``edits`` applied, every range read against the original text."""
    lines = Lines(text)
    spans = [
        (lines.offset(e.range.start, encoding), lines.offset(e.range.end, encoding), e)
        for e in edits
    ]
    # A stable sort: inserts at one position land in the order they were given.
    spans.sort(key=lambda span: (span[0], span[1]))
    pieces: list[str] = []
    at = 0
    for start, end, edit in spans:
        if start < at or end < start:
            raise EditRefused(f"overlapping or inverted edit at line {edit.range.start.line + 1}")
        pieces += [text[at:start], edit.new_text]
        at = end
    pieces.append(text[at:])
    return "".join(pieces)


class _Overlay:
    """Files as the edit would leave them: read lazily, written only by ``commit``."""

    def __init__(self) -> None:
        self.texts: dict[Path, str] = {}
        self.changed: list[Path] = []

    def read(self, path: Path) -> str:
        if path not in self.texts:
            try:
                with path.open(encoding="utf-8", newline="") as file:
                    self.texts[path] = file.read()
            except FileNotFoundError:
                raise EditRefused(f"{path} does not exist") from None
            except UnicodeDecodeError:
                raise EditRefused(f"{path} is not UTF-8 text") from None
        return self.texts[path]

    def exists(self, path: Path) -> bool:
        return path in self.texts or path.exists()

    def write(self, path: Path, text: str) -> None:
        self.texts[path] = text
        if path not in self.changed:
            self.changed.append(path)

    def commit(self) -> None:
        # Imported here: the tools package costs every terminal command about 0.1 s to
        # import, and only an edit needs it.
        from tether.tools.atomic import write_atomically

        for path in self.changed:
            write_atomically(path, self.texts[path])


def _path(uri: str) -> Path:
    path = to_fs_path(uri) if uri.startswith("file:") else None
    if not path:
        raise EditRefused(f"cannot edit {uri}: only file: URIs are supported")
    return Path(path)


Change = types.TextDocumentEdit | types.CreateFile | types.RenameFile | types.DeleteFile


def _apply(overlay: _Overlay, change: Change, encoding: str) -> None:
    if isinstance(change, types.CreateFile):
        path = _path(change.uri)
        options = change.options or types.CreateFileOptions()
        if overlay.exists(path) and not options.overwrite:
            if options.ignore_if_exists:
                return
            raise EditRefused(f"cannot create {path}: it already exists")
        overlay.write(path, "")
    elif isinstance(change, types.TextDocumentEdit):
        path = _path(change.text_document.uri)
        if any(isinstance(e, types.SnippetTextEdit) for e in change.edits):
            raise EditRefused(f"snippet edits are not supported ({path})")
        text_edits = [e for e in change.edits if not isinstance(e, types.SnippetTextEdit)]
        overlay.write(path, apply_text_edits(overlay.read(path), text_edits, encoding))
    else:
        kind = "rename" if isinstance(change, types.RenameFile) else "delete"
        raise EditRefused(f"this client does not {kind} files; do it by hand")


def apply_workspace_edit(
    edit: types.WorkspaceEdit, encoding: str = "utf-16"
) -> types.ApplyWorkspaceEditResult:
    """Apply ``edit`` to disk: all of it, or (before anything is written) none of it."""
    overlay = _Overlay()
    changes: list[Change] = list(edit.document_changes or [])
    if edit.document_changes is None:
        changes = [
            types.TextDocumentEdit(types.OptionalVersionedTextDocumentIdentifier(uri), list(e))
            for uri, e in (edit.changes or {}).items()
        ]
    for index, change in enumerate(changes):
        try:
            _apply(overlay, change, encoding)
        except (EditRefused, OSError) as exc:
            return types.ApplyWorkspaceEditResult(
                applied=False, failure_reason=str(exc), failed_change=index
            )
    try:
        overlay.commit()
    except OSError as exc:
        return types.ApplyWorkspaceEditResult(applied=False, failure_reason=str(exc))
    return types.ApplyWorkspaceEditResult(applied=True)
