"""``fs-list``: what a directory holds, a few levels deep, as git would see it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools import listing, ripgrep
from tether.tools.base import ToolContext
from tether.tools.paths import checked, named, reads_inside, shown

MAX_ENTRIES = 1000


class FsListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        default=".", description="The directory, relative to the workspace root (or absolute)."
    )
    depth: int = Field(
        default=2, ge=1, le=50, description="How many levels to show; 1 = direct children only."
    )


class FsList:
    name = "fs-list"
    reads = True  # its calls only read (one outside the workspace still asks)
    description = (
        "List a directory of the workspace, recursively up to `depth` levels (default 2; 1 = "
        "direct children only). Returns one path per line, relative to the workspace root and "
        "sorted as a tree; directories end with '/', symbolic links show '-> target' and are "
        "not entered. Files ignored by .gitignore and the .git directory are left out. At most "
        f"{MAX_ENTRIES} entries; list a subdirectory or lower the depth for more."
    )
    params = FsListParams

    def __init__(self, rg: Callable[[], str | None] = ripgrep.find_rg) -> None:
        self._rg = rg

    def read_only(self, params: FsListParams, ctx: ToolContext) -> bool:
        return reads_inside(ctx, params.path)

    def summary(self, params: FsListParams, ctx: ToolContext) -> str:
        return f"list {shown(ctx, params.path)} (depth {params.depth})"

    async def run(self, params: FsListParams, ctx: ToolContext) -> str:
        top = checked(ctx, params.path)
        name = named(ctx, top)
        if not top.exists():
            raise ToolError(f"no such directory: {name}")
        if not top.is_dir():
            raise ToolError(f"{name} is a file, not a directory; fs-read reads it")
        items = await listing.collect(self._rg(), ctx, top, MAX_ENTRIES, max_depth=params.depth)
        if not items:
            return f"{name} is empty (or holds only ignored files)"
        base = "" if top == ctx.workspace else name + "/"
        lines = [_line(top, base, item) for item in items[:MAX_ENTRIES]]
        if len(items) > MAX_ENTRIES:
            lines.append(
                f"[listing cut at {MAX_ENTRIES} entries; list a subdirectory or use a smaller "
                "depth to see the rest]"
            )
        return escape_surrogates("\n".join(lines))  # a name not UTF-8, as the model can copy it


def _line(top: Path, base: str, item: listing.Item) -> str:
    text = base + item.below + ("/" if item.is_dir else "")
    if item.is_link:
        try:
            text += f" -> {os.readlink(top / item.below)}"
        except OSError:
            text += " -> ?"
    return text
