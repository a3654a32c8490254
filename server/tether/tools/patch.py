"""``patch``: change one text file, by exact search-and-replace edits or by its whole content.

A patch is planned against the file's current text (the editor's live buffer
when it is open) into a ``FileEdit``. The editor applies it when it can, so it
lands in the buffer and its undo history; else the file is written atomically.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tether.errors import ToolError
from tether.tools import textedits
from tether.tools.atomic import write_atomically
from tether.tools.base import FileEdit, Preview, Replacement, RuleKey, ToolContext, live_text
from tether.tools.paths import allow, named, needs_asking, resolve, shown
from tether.tools.text import read_disk


class Edit(BaseModel):
    model_config = ConfigDict(extra="forbid")

    old: str = Field(
        min_length=1,
        description="Text to replace, copied exactly from the file; must occur exactly once.",
    )
    new: str = Field(description="What replaces it (empty to delete it).")


class PatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The file, relative to the workspace root (or absolute).")
    edits: list[Edit] | None = Field(
        default=None,
        min_length=1,
        description="Search-and-replace edits, each against the file as it is now.",
    )
    content: str | None = Field(
        default=None, description="The whole new text of the file (creates it if missing)."
    )

    @model_validator(mode="after")
    def _edits_or_content(self) -> PatchParams:
        if self.edits is not None and self.content is not None:
            raise ValueError("give either `edits` or `content`, not both")
        if self.edits is None and self.content is None:
            raise ValueError(
                "give either `edits` (a list of {old, new}) or `content` (the whole new file)"
            )
        return self


async def plan(params: PatchParams, ctx: ToolContext) -> FileEdit:
    """The change ``params`` makes to the file's current text; a ToolError if it cannot apply."""
    path = resolve(ctx, params.path)
    name = named(ctx, path)
    allow(ctx, path, params.path)  # its text is read: inside the workspace, or approved
    before = await _current(ctx, path)
    if params.content is not None:
        end = 0 if before is None else len(before)
        changes = [Replacement(start=0, end=end, new=params.content)]
        return FileEdit(path=path, before=before, after=params.content, replacements=changes)
    assert params.edits is not None
    if before is None:
        raise ToolError(f"no such file: {name}; to create it, give `content` instead of `edits`")
    pairs = [(edit.old, edit.new) for edit in params.edits]
    changes = textedits.replacements(before, pairs, name)
    after = textedits.apply(before, changes)
    return FileEdit(path=path, before=before, after=after, replacements=changes)


async def _current(ctx: ToolContext, path: Path) -> str | None:
    """The live text, else the disk's; None when there is no such file yet."""
    live = await live_text(ctx, path)
    return live if live is not None else await asyncio.to_thread(_disk_text, ctx, path)


def _disk_text(ctx: ToolContext, path: Path) -> str | None:
    if path.is_dir():
        raise ToolError(f"{named(ctx, path)} is a directory; patch changes files")
    if not path.exists():
        return None
    return read_disk(ctx, path)  # refuses binary, non-UTF-8 and huge files


def _unread_preview(params: PatchParams, name: str, why: str, budget: int) -> Preview:
    """A patch of a file outside the workspace (or inside .git/), shown from its arguments
    alone: that file's text is not read before the person allows the patch (a failed plan
    would tell the model what it holds)."""
    note = f"[{name} is {why}: its current text is read only once you allow this patch]"
    if params.content is not None:
        body = textedits.preview(None, params.content, name, budget - len(note))
        return Preview(text=f"{note}\n{body.text}", whole=False)
    assert params.edits is not None
    shown = [note]
    for number, edit in enumerate(params.edits, start=1):
        room = (budget - len(note)) // len(params.edits)
        diff = textedits.preview(edit.old, edit.new, f"{name} (edit {number})", room)
        shown.append(diff.text)
    return Preview(text="\n".join(shown), whole=False)


def _counts(params: PatchParams) -> str:
    """``+a -r`` from the edits alone, without reading the file."""
    assert params.edits is not None
    added = removed = 0
    for edit in params.edits:
        plus, minus = textedits.line_counts(edit.old, edit.new)
        added, removed = added + plus, removed + minus
    return f"+{added} -{removed}"


async def _land(edit: FileEdit, name: str, ctx: ToolContext, label: str) -> str:
    """Apply the edit in the editor, or else write it to disk; where it landed."""
    if await ctx.editor.apply(edit, label=label):
        return "applied in the editor"
    if await _current(ctx, edit.path) != edit.before:
        raise ToolError(f"{name} changed while the patch was being applied; read it again")
    try:
        await asyncio.to_thread(write_atomically, edit.path, edit.after)
    except OSError as exc:
        raise ToolError(f"cannot write {name}: {exc.strerror or exc}") from None
    return "written to disk"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


class Patch:
    name = "patch"
    description = (
        "Change one text file. Either `edits`: a list of {old, new}; each `old` is copied "
        "exactly from the file's current text (whitespace included), must occur in it exactly "
        "once (add surrounding lines to make it unique), and is replaced by `new`; all edits "
        "refer to the file as it is before the patch and must not overlap. Or `content`: the "
        "whole new text of the file, which creates it (and its directories) if missing; prefer "
        "`edits` for changes to existing files. Open files are patched in the editor's buffer. "
        "The person approves each patch before it is applied."
    )
    params = PatchParams
    tells_its_changes = True  # ctx.index.changed: no catch-up with the whole workspace after it

    def read_only(self, params: PatchParams, ctx: ToolContext) -> bool:
        return False

    def summary(self, params: PatchParams, ctx: ToolContext) -> str:
        name = shown(ctx, params.path)
        if params.edits is not None:
            return f"edit {name} ({_plural(len(params.edits), 'edit')}, {_counts(params)})"
        assert params.content is not None
        lines = _plural(len(params.content.splitlines()), "line")
        return f"{'replace' if self._exists(params, ctx) else 'create'} {name} ({lines})"

    @staticmethod
    def _exists(params: PatchParams, ctx: ToolContext) -> bool:
        """A stat and a look at the open buffers: cheap enough for a summary."""
        try:
            path = resolve(ctx, params.path)
        except ToolError:
            return False
        return ctx.documents.live_text(path) is not None or path.exists()

    async def plan(self, params: PatchParams, ctx: ToolContext) -> FileEdit:
        return await plan(params, ctx)  # the module's ``plan``: methods do not see class names

    async def preview(self, params: PatchParams, ctx: ToolContext, budget: int) -> Preview:
        path = resolve(ctx, params.path)
        if not ctx.approved and (why := needs_asking(ctx, path)):
            return _unread_preview(params, named(ctx, path), why, budget)
        edit = await plan(params, ctx)
        return textedits.preview(edit.before, edit.after, named(ctx, edit.path), budget)

    def rule_key(self, params: PatchParams, ctx: ToolContext) -> RuleKey | None:
        try:
            name = named(ctx, resolve(ctx, params.path))
        except ToolError:
            return None
        return RuleKey(key=name, words=f"edit {name}")

    async def run(self, params: PatchParams, ctx: ToolContext) -> str:
        edit = await plan(params, ctx)
        name = named(ctx, edit.path)
        if edit.after == edit.before:
            return f"{name} unchanged: the patch leaves its text as it is"
        try:
            where = await _land(edit, name, ctx, label=self.summary(params, ctx))
        finally:  # a cancelled write may still land: the index reads the file again anyway
            ctx.index.changed([edit.path])
        added, removed = textedits.line_counts(edit.before or "", edit.after)
        if params.edits is not None:
            what = f"edited {name}: {_plural(len(params.edits), 'edit')}, +{added} -{removed} lines"
        elif edit.before is None:
            what = f"created {name}: {_plural(len(edit.after.splitlines()), 'line')}"
        else:
            what = f"replaced {name}: +{added} -{removed} lines"
        hunks = textedits.hunk_headers(edit.before, edit.after, name)
        hunk_note = f"\nchanged at: {' '.join(hunks)}" if edit.before is not None and hunks else ""
        return f"{what} ({where}){hunk_note}"
