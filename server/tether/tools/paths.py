"""Path arguments from the model: resolved against the workspace, judged inside or outside."""

from __future__ import annotations

from pathlib import Path

from tether.errors import ToolError
from tether.tools.base import ToolContext


def resolve(ctx: ToolContext, raw: str) -> Path:
    try:
        return ctx.resolve(raw)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on Python 3.11
        raise ToolError(f"cannot resolve path {raw!r}: {exc}") from exc


def reads_inside(ctx: ToolContext, raw: str) -> bool:
    """The ``read_only`` verdict for a path argument: does it resolve inside the workspace?"""
    try:
        return ctx.inside(resolve(ctx, raw))
    except ToolError:
        return True  # nothing can be read through a bad path; run() reports it


def shown(ctx: ToolContext, raw: str) -> str:
    """A path as a summary shows it; never raises."""
    try:
        return ctx.relative(resolve(ctx, raw))
    except ToolError:
        return raw
