"""``index-symbols``: definitions across the workspace by name, from the workspace index.

The index takes each file's definitions with tree-sitter's tag queries (Python,
JavaScript/TypeScript, Go, Rust) and keeps them beside its trigrams; open documents are
read from their live text instead. Names match fuzzily: the exact name first, then a
prefix, a substring, the letters in order, shorter names first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.tools.base import ToolContext, live_text, quoted
from tether.tools.paths import checked, named, reads_inside, shown

Kind = Literal["class", "function", "method", "constant", "type", "interface", "module", "macro"]


class IndexSymbolsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str = Field(
        min_length=1,
        max_length=200,
        description="The name, or part of it, or its letters in order.",
    )
    kind: Kind | None = Field(default=None, description="Only definitions of this kind.")
    path: str = Field(default=".", description="Only under this directory (default: everything).")
    max_results: int = Field(default=50, ge=1, le=500, description="How many to show at most.")


class IndexSymbols:
    name = "index-symbols"
    reads = True  # its calls only read (one outside the workspace still asks)
    description = (
        "Find definitions (classes, functions, methods, types, constants...) across the "
        "workspace by name, fuzzily: exact names first, then prefixes, substrings, and "
        "names holding the letters in order. Returns one 'path:line: kind name' per "
        "definition. Python, JavaScript, TypeScript, Go and Rust files; unsaved editor "
        "text is read instead of the disk copy. Narrow with `kind` and `path`."
    )
    params = IndexSymbolsParams

    def read_only(self, params: IndexSymbolsParams, ctx: ToolContext) -> bool:
        return reads_inside(ctx, params.path)

    def summary(self, params: IndexSymbolsParams, ctx: ToolContext) -> str:
        kind = f" ({params.kind})" if params.kind else ""
        return f"symbols {quoted(params.query)!r}{kind} in {shown(ctx, params.path)}"

    async def run(self, params: IndexSymbolsParams, ctx: ToolContext) -> str:
        if any("\ud800" <= char <= "\udfff" for char in params.query):
            raise ToolError("invalid query: it holds a lone surrogate, which is no text")
        top = checked(ctx, params.path)
        if not ctx.inside(top):
            raise ToolError("index-symbols searches the workspace only; use index-grep outside it")
        live: dict[Path, str] = {}
        for path in ctx.documents.open_paths():
            if ctx.inside(path) and (text := await live_text(ctx, path)) is not None:
                live[path] = text
        found = await ctx.index.symbols(params.query, params.kind, top, live)
        if found is None:
            raise ToolError(
                "the workspace index cannot answer now (it is being built, no watch of the "
                "files runs, or it is off: tools.index); search with index-grep for now, e.g. "
                "'def NAME|class NAME'"
            )
        hits = found.hits
        # While the index is still taking the files' definitions, what it has so far, said so.
        partial = (
            f"the index has taken the definitions of {found.files - found.unread:,} of "
            f"{found.files:,} files so far; more may match: index-grep searches every file"
            if found.unread
            else ""
        )
        if not hits:
            none = f"no definitions matching {quoted(params.query)!r} in {named(ctx, top)}"
            return f"{none}; {partial}" if partial else none
        lines = [
            f"{named(ctx, hit.path)}:{hit.line}: {hit.kind} {hit.name}"
            for hit in hits[: params.max_results]
        ]
        if len(hits) > params.max_results:
            more = len(hits) - params.max_results
            lines.append(f"[{more} more definitions match; narrow with kind or path]")
        if partial:
            lines.append(f"[{partial}]")
        return "\n".join(lines)
