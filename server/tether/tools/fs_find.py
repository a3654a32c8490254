"""``fs-find``: the workspace's paths that match a glob.

A glob becomes an RE2 regex (``google-re2``): matching takes time linear in the name,
whatever the pattern, so no glob can hold the server. Names that are not UTF-8 are
matched, and shown, escaped (``caf\\xe9.txt``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import re2  # type: ignore[import-untyped]  # google-re2 ships no type information
from pydantic import BaseModel, ConfigDict, Field

from tether.errors import ToolError
from tether.outbound import escape_surrogates
from tether.tools import listing, ripgrep
from tether.tools.base import ToolContext, quoted
from tether.tools.paths import MAX_PATH_CHARS, checked, named, reads_inside, shown

MAX_MATCHES = 1000
MAX_GLOB_CHARS = MAX_PATH_CHARS  # a glob matches a path: none longer than this
_GLOB_SYNTAX = frozenset("*?[]{},/\\")  # what makes a glob's character more than itself


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
    reads = True  # its calls only read (one outside the workspace still asks)
    description = (
        "Find files and directories by glob. Returns matching paths, one per line, relative to "
        "the workspace root, sorted as a tree; directories end with '/'. A pattern with '/' is "
        "matched against the path relative to the workspace root or to `path`. Skips what "
        f".gitignore ignores and the .git directory. At most {MAX_MATCHES} results."
    )
    params = FsFindParams

    def __init__(self, rg: Callable[[], str | None] = ripgrep.find_rg) -> None:
        self._rg = rg

    def read_only(self, params: FsFindParams, ctx: ToolContext) -> bool:
        return reads_inside(ctx, params.path)

    def summary(self, params: FsFindParams, ctx: ToolContext) -> str:
        return f"find {quoted(params.pattern)} in {shown(ctx, params.path)}"

    async def run(self, params: FsFindParams, ctx: ToolContext) -> str:
        glob = Glob(params.pattern)
        top = checked(ctx, params.path)
        name = named(ctx, top)
        if not top.is_dir():
            what = "is a file, not a directory" if top.exists() else "does not exist"
            raise ToolError(f"{name} {what}; fs-find searches under a directory")
        base = "" if top == ctx.workspace else name + "/"
        items = await listing.collect(
            self._rg(), ctx, top, MAX_MATCHES, lambda item: glob.finds_below(base, item.below)
        )
        found = [base + item.below + ("/" if item.is_dir else "") for item in items]
        if not found:
            return f"no paths match {quoted(params.pattern)!r} under {name}"
        if len(found) > MAX_MATCHES:
            found[MAX_MATCHES:] = [
                f"[stopped after {MAX_MATCHES} matches; narrow the pattern or the path]"
            ]
        return escape_surrogates("\n".join(found))  # a name not UTF-8, as it can be copied


class Glob:
    """``**/*.py``, ``src/*.ts``, ``*.{js,ts}``: a pattern without "/" matches base names."""

    def __init__(self, pattern: str) -> None:
        if len(pattern) > MAX_GLOB_CHARS:
            raise ToolError(
                f"invalid glob {quoted(pattern)!r}: it is {len(pattern):,} characters long; "
                f"a glob matches paths, and is at most {MAX_GLOB_CHARS:,}"
            )
        if "\0" in pattern:
            raise ToolError(f"invalid glob {quoted(pattern)!r}: it holds NUL, which no path holds")
        self.pattern = escape_surrogates(pattern).strip().removeprefix("./").lstrip("/")
        self.anchored = "/" in self.pattern
        self._regex = _compiled(self.pattern)
        self._suffix = _suffix(self.pattern)

    def matches(self, rel: str) -> bool:
        """Whether the path ``rel`` (or its base name) matches; a name that is not UTF-8 is
        matched as it is shown, escaped."""
        if self._suffix is not None:  # `*.py`, `**/*.py`: the base name's end decides
            return escape_surrogates(rel.rpartition("/")[2]).endswith(self._suffix)
        subject = rel if self.anchored else rel.rpartition("/")[2]
        # As UTF-8 bytes: RE2's wrapper maps a str's offsets back, 2.6 times the cost.
        return self._regex.fullmatch(escape_surrogates(subject).encode()) is not None

    def finds(self, ctx: ToolContext, top: Path, path: Path) -> bool:
        """Whether a search of ``top`` finds ``path``: its path from the root or from ``top``."""
        below = path.relative_to(top).as_posix() if path != top else path.name
        return self.matches(ctx.relative(path)) or self.matches(below)

    def finds_below(self, base: str, below: str) -> bool:
        """``finds`` for the path ``base + below``, where ``base`` is how ``top/`` is shown."""
        if self._suffix is not None and below.isascii():  # the commonest, told at once
            return below.endswith(self._suffix)  # the suffix holds no "/": the name's end
        return self.matches(base + below) or (base != "" and self.matches(below))

    def name_part(self) -> str | None:
        """A glob every matching base name satisfies, if the pattern has one."""
        last = self.pattern.rpartition("/")[2]
        if not last or "**" in last or last.count("{") != last.count("}"):
            return None
        return last


def _suffix(glob: str) -> str | None:
    """The literal end of a glob shaped ``*.py`` or ``**/*.py``, which match the paths whose
    base name ends so: the commonest globs, told without a regex (a path at a time, RE2's
    wrapper costs some microseconds)."""
    tail = glob.removeprefix("**/")
    if not tail.startswith("*"):
        return None
    literal = tail[1:]
    return None if _GLOB_SYNTAX.intersection(literal) else literal


def _compiled(glob: str) -> Any:
    options = re2.Options()
    options.dot_nl = True  # "**" crosses any character, a newline in a name too
    options.log_errors = False
    try:
        return re2.compile(_translate(glob), options)
    except (re2.error, ValueError) as exc:
        why = exc.args[0] if exc.args else exc
        why = quoted(why.decode(errors="replace") if isinstance(why, bytes) else str(why))
        raise ToolError(f"invalid glob {quoted(glob)!r}: {why}") from None


def _translate(glob: str) -> str:
    """The glob as a regex, in one pass: each character is looked at a bounded number of
    times (a "[" with no "]" after it must not send a search to the end for every "[")."""
    out: list[str] = []
    braces = 0
    last_close = glob.rfind("]")
    i = 0
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if char == "[" and i + 2 <= last_close:
            end = glob.index("]", i + 2)
            body = glob[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end + 1
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{":
            out.append("(?:")
            braces += 1
        elif char == "}" and braces:
            out.append(")")
            braces -= 1
        elif char == "," and braces:
            out.append("|")
        else:
            out.append(re2.escape(char))
        i += 1
    if braces:
        raise ValueError("unclosed '{'")
    return "".join(out)
