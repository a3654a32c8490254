"""Path arguments from the model (``tether.tools.paths``): resolved against the workspace
and judged inside or outside it, when planned (whether a read runs without asking) and
again when the call runs (a symlink may have moved in between)."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.tools import bytes_name, call, context, read_only, summary, write
from tether.errors import ToolError
from tether.tools.base import Tool
from tether.tools.builtin import builtin_tools
from tether.tools.fs_find import FsFind
from tether.tools.fs_list import FsList
from tether.tools.fs_read import FsRead
from tether.tools.index_grep import IndexGrep
from tether.tools.outline import Outline
from tether.tools.patch import Patch
from tether.tools.paths import checked, reads_inside, resolve

NOW_OUTSIDE = r"now resolves outside the workspace; call it again and the person will be asked"


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


def arguments_for(tool: Tool[Any], path: str) -> dict[str, Any]:
    extra = {"pattern": "x"} if tool.name in {"fs-find", "index-grep"} else {}
    return {"path": path, **extra}


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
    assert read_only(tool, ctx, **arguments_for(tool, "inside.py"))
    assert not read_only(tool, ctx, **arguments_for(tool, path))


@pytest.mark.parametrize("tool", [t for t in builtin_tools() if t.name in PATH_TOOLS])
@pytest.mark.parametrize(
    "path", [".git/config", ".git", "sub/.git/config", ".GIT/config", "gitconfig", "src/../.git"]
)
def test_a_read_inside_git_asks(tmp_path: Path, tool: Tool[Any], path: str) -> None:
    ws = tmp_path / "ws"
    write(ws, ".git/config", "[remote]\n\turl = https://user:token@example.com/r.git\n")
    write(ws, "sub/.git/config", "")
    write(ws, "src/a.py", "")
    (ws / "gitconfig").symlink_to(ws / ".git/config")
    ctx = context(ws)
    assert read_only(tool, ctx, **arguments_for(tool, "src/a.py"))
    assert not read_only(tool, ctx, **arguments_for(tool, path))
    assert read_only(tool, ctx, **arguments_for(tool, ".gitignore"))  # only .git itself


async def test_a_read_inside_git_runs_only_when_approved(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, ".git/config", "url = https://user:token@example.com\n")
    with pytest.raises(ToolError, match=r"\.git/config now resolves inside \.git/; call it again"):
        await call(FsRead(), context(ws), path=".git/config")
    assert "token" in await call(FsRead(), context(ws, approved=True), path=".git/config")


# Each read tool, with arguments that read what ``docs`` holds.
READS: list[tuple[Tool[Any], dict[str, Any], str]] = [
    (FsRead(), {"path": "docs/id_rsa"}, "PRIVATE KEY"),
    (FsList(), {"path": "docs"}, "id_rsa"),
    (FsList(rg=lambda: None), {"path": "docs"}, "id_rsa"),
    (FsFind(), {"pattern": "*", "path": "docs"}, "id_rsa"),
    (FsFind(rg=lambda: None), {"pattern": "*", "path": "docs"}, "id_rsa"),
    (IndexGrep(), {"pattern": "PRIVATE", "path": "docs"}, "PRIVATE KEY"),
    (IndexGrep(rg=lambda: None), {"pattern": "PRIVATE", "path": "docs"}, "PRIVATE KEY"),
    (IndexGrep(), {"pattern": "PRIVATE", "path": "docs/id_rsa"}, "PRIVATE KEY"),
    (Outline(), {"path": "docs/key.py"}, "PRIVATE_KEY"),
]


@pytest.mark.parametrize(("tool", "arguments", "secret"), READS)
async def test_a_read_planned_inside_is_refused_if_it_resolves_outside_when_it_runs(
    tmp_path: Path, tool: Tool[Any], arguments: dict[str, Any], secret: str
) -> None:
    ws = tmp_path / "ws"
    write(ws, "docs/readme.md", "docs\n")
    outside = tmp_path / "outside"
    write(outside, "id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\n")
    write(outside, "key.py", "def PRIVATE_KEY():\n    pass\n")
    ctx = context(ws)
    assert read_only(tool, ctx, **arguments)  # planned: inside, so it would not ask
    shutil.rmtree(ws / "docs")
    (ws / "docs").symlink_to(outside)  # what `git checkout evil` did meanwhile

    with pytest.raises(ToolError, match=NOW_OUTSIDE):
        await call(tool, ctx, **arguments)
    # The person approved it: then it runs.
    assert secret in await call(tool, context(ws, approved=True), **arguments)


def test_checked_resolves_now_and_allows_only_inside_or_approved(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write(ws, "a.txt", "")
    write(tmp_path, "out.txt", "")
    ctx = context(ws)
    assert checked(ctx, "a.txt") == ctx.workspace / "a.txt"
    with pytest.raises(ToolError, match=r"\.\./out\.txt " + NOW_OUTSIDE):
        checked(ctx, "../out.txt")
    assert checked(context(ws, approved=True), "../out.txt") == (tmp_path / "out.txt").resolve()


def test_a_name_that_is_not_utf8_resolves_from_its_escaped_form(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    real = bytes_name(ws, b"caf\xe9.txt")
    (ws / "d\udcff").mkdir()
    ctx = context(ws)
    assert resolve(ctx, "caf\\xe9.txt") == real.resolve()  # as copied from a listing
    assert resolve(ctx, "caf\udce9.txt") == real.resolve()  # the raw form works too
    assert resolve(ctx, "d\\xff/new.txt") == ctx.workspace / "d\udcff/new.txt"  # a new file
    assert resolve(ctx, "none\\xe9.txt") == ctx.workspace / "none\\xe9.txt"  # nothing: literal
    write(ws, "lit\\xe9.txt", "")  # a name that really holds a backslash wins
    assert resolve(ctx, "lit\\xe9.txt") == ctx.workspace / "lit\\xe9.txt"


@pytest.mark.parametrize("surrogate", ["\ud800", "\udc00", "\udc7f", "\udd00", "\udfff"])
def test_a_lone_surrogate_that_is_no_name_byte_is_an_invalid_path(
    tmp_path: Path, surrogate: str
) -> None:
    ctx = context(tmp_path)
    with pytest.raises(ToolError, match=r"invalid path 'a\\\\u[0-9a-f]{4}\.txt'"):
        resolve(ctx, f"a{surrogate}.txt")
    assert reads_inside(ctx, f"a{surrogate}.txt")  # nothing can be read through it


# --- the property: nothing outside the workspace (or inside .git/) is read unasked ---

SECRET = "SECRET-OUTSIDE"
GIT_SECRET = "SECRET-IN-GIT"
TARGETS = [
    "{outside}",
    "{outside}/secret.txt",
    "..",
    "../..",
    "../outside",
    "../outside/secret.txt",
    ".git",
    ".git/config",
    "docs",
    "docs/a.txt",
    "/",
    "loop",
]
PARTS = ["docs", "a.txt", "a.py", "..", ".", ".git", "config", "secret.txt", "secret.py"]
PARTS += ["outside"]
PARTS += ["l0", "l1", "l2", "l1\\xe9", "l2\\xff\\xfe", "caf\udce9", "x\ud800", "{outside}", "~"]


@st.composite
def layouts(draw: st.DrawFn) -> tuple[list[tuple[str, str, bytes]], list[str]]:
    """Symbolic links (where, to what, and a name byte that need not be UTF-8) and a path."""
    links = draw(
        st.lists(
            st.tuples(
                st.sampled_from(["", "docs/", "docs/deep/"]),
                st.sampled_from(TARGETS),
                st.sampled_from([b"", b"\xe9", b"\xff\xfe"]),
            ),
            max_size=3,
        )
    )
    named = [(where, target, suffix) for where, target, suffix in links]
    path = draw(st.lists(st.sampled_from(PARTS), min_size=1, max_size=4))
    return named, path


READERS: list[Tool[Any]] = [
    FsRead(),
    FsList(),
    FsFind(rg=lambda: None),
    IndexGrep(),
    IndexGrep(rg=lambda: None),
    Outline(),
]


def build(root: Path, links: list[tuple[str, str, bytes]]) -> Path:
    ws = root / "ws"
    outside = root / "outside"
    write(outside, "secret.txt", SECRET + "\n")
    write(outside, "secret.py", f"def {SECRET.replace('-', '_')}(): pass\n")
    write(ws, "docs/a.txt", "inside\n")
    write(ws, "docs/a.py", "def inside(): pass\n")
    write(ws, "docs/deep/b.txt", "inside\n")
    write(ws, ".git/config", GIT_SECRET + "\n")
    for number, (where, target, suffix) in enumerate(links):
        name = os.path.join(os.fsencode(ws / where), f"l{number}".encode() + suffix)
        goal = target.replace("{outside}", str(outside))
        if goal == "loop":
            goal = os.fsdecode(name)
        if not os.path.lexists(name):
            os.symlink(goal, name)
    return ws


def argument(path: list[str], outside: Path) -> str:
    return "/".join(path).replace("{outside}", str(outside))


async def attempt(tool: Tool[Any], ctx: Any, raw: str) -> str:
    arguments: dict[str, Any] = {"path": raw}
    if tool.name == "fs-find":
        arguments["pattern"] = "*"
    if tool.name == "index-grep":
        arguments["pattern"] = "SECRET"
    try:
        return await call(tool, ctx, **arguments)
    except ToolError as exc:
        return f"error: {exc}"


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(layout=layouts(), reader=st.sampled_from(READERS))
def test_no_path_or_symlink_layout_reads_outside_the_workspace_unasked(
    layout: tuple[list[tuple[str, str, bytes]], list[str]], reader: Tool[Any]
) -> None:
    links, parts = layout
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp).resolve()
        ws = build(root, links)
        raw = argument(parts, root / "outside")
        ctx = context(ws)
        asked = not reads_inside(ctx, raw)
        out = asyncio.run(attempt(reader, ctx, raw))
        assert SECRET not in out and SECRET.replace("-", "_") not in out, (raw, out)
        assert GIT_SECRET not in out, (raw, out)
        # Judged the same way when planned and when run: a read that did not ask is not
        # refused at run time (nothing moved in between).
        if not asked:
            assert "call it again" not in out, (raw, out)


# --- found by the tool-argument fuzz (tests/reliability/tool_fuzz.py) ---

PATH_READERS: list[Tool[Any]] = [FsRead(), FsList(), FsFind(), IndexGrep(), Outline()]


@pytest.mark.parametrize("tool", PATH_READERS, ids=lambda tool: tool.name)
@pytest.mark.parametrize("raw", ["x" * 256, "a" * 65_536, "d/" * 2100])
async def test_a_path_too_long_for_the_file_system_is_an_invalid_path(
    tool: Tool[Any], raw: str, tmp_path: Path
) -> None:
    """Seed 20261201: fs-list and fs-find answered `failed unexpectedly: OSError(36, 'File
    name too long')` for {"path": "a" * 65536}: Path.exists() raises ENAMETOOLONG."""
    ctx = context(tmp_path)
    with pytest.raises(ToolError, match=r"invalid path .*(File name too long|characters long)"):
        resolve(ctx, raw)
    arguments: dict[str, Any] = {"path": raw}
    if tool.name in ("fs-find", "index-grep"):
        arguments["pattern"] = "*" if tool.name == "fs-find" else "a"
    with pytest.raises(ToolError, match=r"invalid path") as refused:
        await call(tool, ctx, **arguments)
    assert len(str(refused.value)) < 1000


@pytest.mark.timeout(30)
def test_a_path_of_megabytes_is_refused_before_it_is_resolved(tmp_path: Path) -> None:
    """Seed 20261201: {"path": "../" * 2_796_202} held the event loop for minutes: resolving
    a path costs time quadratic in its parts, and a read's verdict resolves it unasked."""
    ctx = context(tmp_path)
    raw = "../" * 2_796_202
    start = time.monotonic()
    with pytest.raises(ToolError, match=r"it is 8,388,606 characters long") as refused:
        resolve(ctx, raw)
    assert reads_inside(ctx, raw)  # nothing can be read through it; run() says so
    assert time.monotonic() - start < 1
    assert len(str(refused.value)) < 1000


@pytest.mark.parametrize("tool", [*PATH_READERS, Patch()], ids=lambda tool: tool.name)
def test_a_summary_quotes_a_long_path_by_its_head_and_tail(tool: Tool[Any], tmp_path: Path) -> None:
    """Seed 20261201: a `tool_call` update carried a summary of 65,551 characters (the whole
    path), past the 4,000 an editor is sent of any argument."""
    raw = "head" + "a" * 65_536 + "tail"
    arguments: dict[str, Any] = {"path": raw}
    if tool.name in ("fs-find", "index-grep"):
        arguments["pattern"] = "*" if tool.name == "fs-find" else "a"
    if tool.name == "patch":
        arguments["content"] = "x"
    line = summary(tool, context(tmp_path), **arguments)
    assert len(line) < 500
    assert "head" in line and "tail" in line and "65,544 characters" in line


def test_a_path_with_nul_is_refused_quoting_only_its_head_and_tail(tmp_path: Path) -> None:
    raw = "\x00" + "a" * 8_000_000
    with pytest.raises(ToolError, match=r"invalid path") as refused:
        context(tmp_path).resolve(raw)
    assert len(str(refused.value)) < 1000
