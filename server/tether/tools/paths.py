r"""Path arguments from the model: resolved against the workspace, judged inside or outside.

A path is judged twice. When the reply is planned, ``reads_inside`` decides whether a
read runs without asking: not when it resolves outside the workspace, nor inside a
``.git`` directory (its config can hold credentials). When the call runs, ``checked``
resolves it again and refuses it unless the person approved this very call: a command
earlier in the same reply may have moved a symbolic link in between.

Names that are not UTF-8 are held as lone surrogates (U+DC80..U+DCFF, Python's
``surrogateescape``) and shown escaped (``caf\xe9.txt``, ``outbound.escape_surrogates``);
a path written that way resolves to the file it names. Any other lone surrogate names
no file at all: an invalid path.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools.base import ToolContext, quoted

# Longer than any path a file system takes (4,096 bytes on Linux), even written with escapes
# (``\xe9`` is four characters for one byte). Resolving costs time quadratic in a path's
# parts: a path of megabytes of "../" would hold the server for minutes.
MAX_PATH_CHARS = 16_384
_ESCAPED_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")  # as escape_surrogates writes them
_NOT_A_NAME_BYTE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def resolve(ctx: ToolContext, raw: str) -> Path:
    """``raw`` resolved now, symlinks followed; a ToolError for a path that cannot name a file."""
    if len(raw) > MAX_PATH_CHARS:
        raise ToolError(
            f"invalid path {quoted(raw)!r}: it is {len(raw):,} characters long, "
            f"longer than any path ({MAX_PATH_CHARS:,} at most)"
        )
    if bad := _NOT_A_NAME_BYTE.search(raw):
        raise ToolError(
            f"invalid path {quoted(raw)!r}: it holds a lone surrogate "
            f"(U+{ord(bad[0]):04X}), which names no file"
        )
    path = _unescaped(ctx, raw)
    _refuse_too_long(path, raw)
    return path


def _unescaped(ctx: ToolContext, raw: str) -> Path:
    """``raw`` resolved as written, or as the name its escapes stand for."""
    literal = _resolve(ctx, raw)
    if not _ESCAPED_BYTE.search(raw) or _exists(ctx, raw):
        return literal
    # A name copied from a listing: "caf\xe9.txt" stands for the bytes 63 61 66 e9 ...
    unescaped = _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m[1], 16)), raw)
    try:
        unescaped = os.fsdecode(os.fsencode(unescaped))  # "\xc3\xa9" is the name "é"
    except UnicodeError:
        return literal  # a platform whose file names are not bytes
    if _exists(ctx, unescaped) or (
        _exists(ctx, os.path.dirname(unescaped)) and not _exists(ctx, os.path.dirname(raw))
    ):
        return _resolve(ctx, unescaped)
    return literal


def _resolve(ctx: ToolContext, raw: str) -> Path:
    try:
        return ctx.resolve(raw)
    except (OSError, RuntimeError, ValueError) as exc:  # RuntimeError: a symlink loop (3.11)
        raise ToolError(f"cannot resolve path {quoted(raw)!r}: {exc}") from None


def _refuse_too_long(path: Path, raw: str) -> None:
    """A ToolError for a path the file system cannot take (a name past 255 bytes, a path
    past 4,095 on Linux): every later look at it would fail with ENAMETOOLONG."""
    try:
        os.lstat(path)
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            raise ToolError(f"invalid path {quoted(raw)!r}: {exc.strerror}") from None


def _exists(ctx: ToolContext, raw: str) -> bool:
    try:
        return os.path.lexists(ctx.workspace / Path(raw).expanduser())
    except (OSError, RuntimeError, ValueError):
        return False


def needs_asking(ctx: ToolContext, path: Path) -> str | None:
    """Why reading the resolved ``path`` needs the person's approval; None when it does not."""
    if not ctx.inside(path):
        return "outside the workspace"
    if any(_is_git(part) for part in path.relative_to(ctx.workspace).parts):
        return "inside .git/"
    return None


def _is_git(part: str) -> bool:
    # Case-insensitive file systems (and Windows's trailing dots and spaces) alias ".git".
    return part.rstrip(" .").lower() == ".git"


def reads_inside(ctx: ToolContext, raw: str) -> bool:
    """The ``read_only`` verdict for a path argument: inside the workspace and outside .git/?"""
    try:
        return needs_asking(ctx, resolve(ctx, raw)) is None
    except ToolError:
        return True  # nothing can be read through a bad path; run() reports it


def allow(ctx: ToolContext, path: Path, shown_as: str) -> None:
    """A ToolError unless reading ``path`` is allowed now: inside the workspace and outside
    .git/, or approved by the person for this very call."""
    if not ctx.approved and (why := needs_asking(ctx, path)):
        raise ToolError(
            f"{quoted(shown_as)} now resolves {why}; call it again and the person will be asked"
        )


def checked(ctx: ToolContext, raw: str) -> Path:
    """A path argument of a call that runs now: resolved again and ``allow``-ed."""
    path = resolve(ctx, raw)
    allow(ctx, path, raw)
    return path


def named(ctx: ToolContext, path: Path) -> str:
    """How a resolved path is shown to the model: workspace-relative, escaped."""
    return escape_surrogates(ctx.relative(path))


def shown(ctx: ToolContext, raw: str) -> str:
    """A path as a summary shows it, a long one cut (``quoted``); never raises."""
    try:
        return quoted(named(ctx, resolve(ctx, raw)))
    except ToolError:
        return quoted(raw)
