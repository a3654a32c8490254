"""``fs-find``: the workspace's paths that match a glob."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.tools.base import ToolContext
from tether.tools.files import Glob, reads_inside, resolve, shown, walk

MAX_MATCHES = 1000


class FsFindParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        description=(
            "A glob: '*' within one path segment, '**' across any number, '?', '[abc]', "
            "'{ts,tsx}'. Without '/' it matches file names at any depth ('*.md'); with '/' "
            "the whole path ('src/**/*.py')."
        )
    )
    path: str = Field(
        default=".",
        description="Only search under this directory (relative to the workspace root).",
    )


class FsFind:
    name = "fs-find"
    description = (
        "Find files and directories by glob. Returns matching paths, one per line, relative to "
        "the workspace root, sorted as a tree; directories end with '/'. A pattern with '/' is "
        "matched against the path relative to the workspace root or to `path`. Skips what "
        f".gitignore ignores and the .git directory. At most {MAX_MATCHES} results."
    )
    params = FsFindParams

    def read_only(self, params: FsFindParams, ctx: ToolContext) -> bool:
        return reads_inside(ctx, params.path)

    def summary(self, params: FsFindParams, ctx: ToolContext) -> str:
        return f"find {params.pattern} in {shown(ctx, params.path)}"

    async def run(self, params: FsFindParams, ctx: ToolContext) -> str:
        glob = Glob(params.pattern)
        top = resolve(ctx, params.path)
        name = ctx.relative(top)
        if not top.is_dir():
            what = "is a file, not a directory" if top.exists() else "does not exist"
            raise ToolError(f"{name} {what}; fs-find searches under a directory")
        found = await asyncio.to_thread(_find, ctx, top, glob)
        if not found:
            return f"no paths match {params.pattern!r} under {name}"
        if len(found) > MAX_MATCHES:
            found[MAX_MATCHES:] = [
                f"[stopped after {MAX_MATCHES} matches; narrow the pattern or the path]"
            ]
        return "\n".join(found)


def _find(ctx: ToolContext, top: Path, glob: Glob) -> list[str]:
    found: list[str] = []
    for entry in walk(ctx.workspace, top):
        from_top = entry.path.relative_to(top).as_posix()
        from_root = ctx.relative(entry.path)
        if glob.matches(from_root) or glob.matches(from_top):
            found.append(from_root + ("/" if entry.is_dir else ""))
            if len(found) > MAX_MATCHES:
                break
    return found
