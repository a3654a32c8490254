"""The ``Tool`` seam: what every tool is, and the context it runs in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel

from tether.config import ToolsSettings
from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools.index_view import Index, NoIndex
from tether.tools.sandbox import Sandbox

QUOTED_CHARS = 300  # the most of one argument that a summary or an error quotes


class Documents(Protocol):
    """The editor's open documents: their live (possibly unsaved) text."""

    def live_text(self, path: Path) -> str | None:
        """The open document's text, or None when the editor does not have it open."""
        ...

    def open_paths(self) -> list[Path]:
        """Every open document that is a file on disk."""
        ...

    def unsaved(self) -> list[Path]:
        """Open documents whose text differs from their file (a command sees the file)."""
        ...


@runtime_checkable
class AsksForText(Protocol):
    """Documents whose editor is asked for each file's text (ACP's ``fs/read_text_file``):
    it answers with its buffer where the file is open, and knows no list of open files."""

    async def text_of(self, path: Path) -> str | None:
        """The editor's text of ``path``; None when it has none (the disk decides)."""
        ...


async def live_text(ctx: ToolContext, path: Path) -> str | None:
    """The editor's text of ``path`` when it has one: its open document's, or its answer."""
    if isinstance(ctx.documents, AsksForText):
        return await ctx.documents.text_of(path)
    return ctx.documents.live_text(path)


class NoDocuments:
    """No editor attached: every read goes to disk."""

    def live_text(self, path: Path) -> str | None:
        return None

    def open_paths(self) -> list[Path]:
        return []

    def unsaved(self) -> list[Path]:
        return []


class Replacement(BaseModel):
    """Replace ``text[start:end]`` (string offsets into the current text) with ``new``."""

    start: int
    end: int
    new: str


class FileEdit(BaseModel):
    """One file's change: the text it was planned against, and the replacements."""

    path: Path
    before: str | None  # None: the file does not exist yet
    after: str
    replacements: list[Replacement]


class Editor(Protocol):
    """The editor's side of a patch: land it in its buffers and undo history."""

    async def apply(self, edit: FileEdit, label: str) -> bool:
        """True when the editor applied it; False when the server must write it itself."""
        ...


class NoEditor:
    async def apply(self, edit: FileEdit, label: str) -> bool:
        return False


@dataclass(frozen=True)
class ToolContext:
    workspace: Path
    documents: Documents
    settings: ToolsSettings
    editor: Editor = field(default_factory=NoEditor)
    secrets: tuple[str, ...] = ()  # values never handed to a command's environment
    # The person approved this very call: only then may a read reach outside the
    # workspace (judged again when it runs: a symlink may have moved since it was planned).
    approved: bool = False
    by_rule: bool = False  # ... and it was a remembered rule that approved it, not a dialog
    # Where a running call's output goes as it comes (the editor shows it live).
    output: Callable[[str], None] = field(default=lambda text: None)
    sandbox: Sandbox = field(default_factory=Sandbox)  # where commands run (or why not)
    index: Index = field(default_factory=NoIndex)  # narrows index-grep once it is built

    def resolve(self, raw: str) -> Path:
        """A model-given path, relative to the workspace or absolute, symlinks followed."""
        if not raw or "\x00" in raw:
            raise ToolError(f"invalid path {quoted(raw)!r}")
        path = Path(raw).expanduser()
        if not path.is_absolute():
            path = self.workspace / path
        return path.resolve()

    def inside(self, path: Path) -> bool:
        return path == self.workspace or path.is_relative_to(self.workspace)

    def relative(self, path: Path) -> str:
        """How a path is shown to the model: workspace-relative where it can be."""
        return path.relative_to(self.workspace).as_posix() if self.inside(path) else str(path)


def quoted(text: str, limit: int = QUOTED_CHARS) -> str:
    """An argument as a summary or an error quotes it: lone surrogates escaped, and one
    longer than ``limit`` shown as its head and tail around its length (an argument can be
    megabytes, and a summary or an error is sent to the editor and the model)."""
    text = escape_surrogates(text)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}… [{len(text):,} characters] …{text[-half:]}"


P = TypeVar("P", bound=BaseModel)
P_contra = TypeVar("P_contra", bound=BaseModel, contravariant=True)


class Tool(Protocol[P]):
    """One tool the model can call, generic in its params model.

    ``read_only`` is a property of the call, not of the tool: a read whose path
    resolves outside the workspace reports itself approval-requiring.
    """

    name: str
    description: str
    params: type[P]

    def read_only(self, params: P, ctx: ToolContext) -> bool: ...

    def summary(self, params: P, ctx: ToolContext) -> str:
        """One line a person can judge the call by."""
        ...

    async def run(self, params: P, ctx: ToolContext) -> str:
        """Do the work; return what the model reads. Raise ``ToolError`` on failure."""
        ...


class RuleKey(BaseModel):
    """What an allowed call may be remembered by: a key a rule matches, and the words that
    tell the person what the rule covers."""

    key: str
    words: str


class Preview(BaseModel):
    """What a person is shown of a call before deciding: all of it, or as much as fits
    (``whole`` False: the text says what was left out, and nothing is remembered from it)."""

    text: str
    whole: bool = True


@runtime_checkable
class Gated(Protocol[P_contra]):
    """What an approval-requiring tool adds, so a person can judge and remember its calls."""

    async def preview(self, params: P_contra, ctx: ToolContext, budget: int) -> Preview:
        """What the person is shown before deciding, in about ``budget`` characters: the
        command line (a long one as its head and its tail), the diff."""
        ...

    def rule_key(self, params: P_contra, ctx: ToolContext) -> RuleKey | None:
        """How an "allow always" of this call is scoped; None: it cannot be remembered."""
        ...


@runtime_checkable
class Sandboxable(Protocol):
    """A tool that runs programs, in the sandbox where there is one."""

    def sandboxed(self, ctx: ToolContext) -> bool:
        """Whether its calls run in the sandbox (recorded with each result)."""
        ...


@runtime_checkable
class TellsItsChanges(Protocol):
    """An approval-requiring tool that tells the index each file it changes
    (``ctx.index.changed``): the next search need not catch up with the whole workspace,
    as it does after a call whose changes nobody knows (a command)."""

    tells_its_changes: bool


@runtime_checkable
class RunsUnasked(Protocol[P_contra]):
    """An approval-requiring tool whose call may run without a dialog, by the person's
    policy (a command in the sandbox, with ``approval.commands = sandboxed``)."""

    def unasked(self, params: P_contra, ctx: ToolContext) -> str | None:
        """What lets this call run without asking; None: it asks."""
        ...


@runtime_checkable
class EditsFiles(Protocol[P_contra]):
    """A tool whose call is a file edit that can be planned, and previewed, before it runs."""

    async def plan(self, params: P_contra, ctx: ToolContext) -> FileEdit: ...


def reads(tool: Tool[Any]) -> bool:
    """Whether a tool's calls only read (``reads = True`` on the tool): what a listing
    says of it. A call decides for itself (``read_only``)."""
    return getattr(tool, "reads", False) is True
