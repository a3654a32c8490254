"""Path arguments from the model (``tether.tools.paths``): resolved against the workspace
and judged inside or outside it, which decides whether a read runs without asking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.unit.tools import context, read_only, write
from tether.tools import builtin_tools
from tether.tools.base import Tool
from tether.tools.paths import reads_inside


def test_reads_inside_follows_dotdot_and_symlinks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "")
    write(tmp_path, "secret.txt", "")
    (ws / "escape").symlink_to(tmp_path / "secret.txt")
    ctx = context(ws)
    assert reads_inside(ctx, "a.txt")
    assert reads_inside(ctx, str(ws / "a.txt"))
    assert not reads_inside(ctx, "../secret.txt")
    assert not reads_inside(ctx, "escape")
    assert not reads_inside(ctx, "/etc/passwd")
    assert reads_inside(ctx, "bad\x00path")  # nothing can be read through it


PATH_TOOLS = {"fs-read", "fs-list", "fs-find", "index-grep", "outline", "git-diff"}


@pytest.mark.parametrize("tool", [t for t in builtin_tools() if t.name in PATH_TOOLS])
@pytest.mark.parametrize("path", ["../outside.py", "escape.py"])
def test_a_path_outside_the_workspace_is_not_read_only(
    tmp_path: Path, tool: Tool[Any], path: str
) -> None:
    ws = tmp_path / "ws"
    write(ws, "inside.py", "")
    write(tmp_path, "outside.py", "")
    (ws / "escape.py").symlink_to(tmp_path / "outside.py")
    ctx = context(ws)
    extra = {"pattern": "x"} if tool.name in {"fs-find", "index-grep"} else {}
    assert read_only(tool, ctx, path="inside.py", **extra)
    assert not read_only(tool, ctx, path=path, **extra)
