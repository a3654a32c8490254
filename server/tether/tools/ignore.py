"""Which files belong to the workspace: a .gitignore engine and the walk built on it.

The walk is the reference for what "a file of the workspace" means; ripgrep is
run with flags that make it agree (see ``ripgrep``): hidden files are seen,
``.git/`` never is, symbolic links are listed but not followed, and the
``.gitignore`` files at every level plus ``.git/info/exclude`` are honoured
whether or not the workspace is a git repository.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec

from tether.errors import ToolError
from tether.tools.regular import open_regular

MAX_IGNORE_BYTES = 4 * 2**20  # more than any real ignore file; a huge one is read this far
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Ignores:
    """The ignore files in force at one directory, shallowest first."""

    rules: tuple[tuple[Path, GitIgnoreSpec], ...] = ()

    def ignored(self, path: Path, is_dir: bool) -> bool:
        verdict = False
        for base, spec in self.rules:
            rel = posix_below(base, path) + ("/" if is_dir else "")
            # A name that is not UTF-8 (held with lone surrogates) as its ignore file's
            # patterns are read: each such byte is U+FFFD, which a wildcard matches.
            rel = _LONE_SURROGATE.sub("\ufffd", rel)
            # Deeper files override shallower ones, as in git ("!keep.log" below "*.log").
            if (include := spec.check_file(rel).include) is not None:
                verdict = include
        return verdict

    def descend(self, directory: Path) -> Ignores:
        spec = _load(directory / ".gitignore")
        return Ignores((*self.rules, (directory, spec))) if spec else self


def posix_below(base: Path, path: Path) -> str:
    """``path.relative_to(base).as_posix()``; ValueError when ``path`` is not under
    ``base``. Cut from the path's string where it starts with the base's: ``relative_to``
    parses both, half the time to tell whether an entry is ignored."""
    full, start = os.fspath(path), os.fspath(base)
    prefix = start if start.endswith(os.sep) else start + os.sep
    if len(full) > len(prefix) and full.startswith(prefix):
        below = full[len(prefix) :]
        return below if os.sep == "/" else below.replace(os.sep, "/")
    return path.relative_to(base).as_posix()


def _lines(file: Path) -> list[str]:
    """An ignore file's lines; none when it is missing or not a regular file (a FIFO named
    .gitignore must not hang every listing)."""
    try:
        with open_regular(file, file.name) as stream:
            data = stream.read(MAX_IGNORE_BYTES)
    except (ToolError, OSError):
        return []
    return data.decode("utf-8", errors="replace").splitlines()


def _load(file: Path) -> GitIgnoreSpec | None:
    spec = GitIgnoreSpec.from_lines(_lines(file))
    return spec if any(pattern.include is not None for pattern in spec.patterns) else None


def ignores_above(root: Path, top: Path) -> Ignores:
    """The rules that apply inside ``top``, from the workspace ``root`` down to it.

    A directory named explicitly is walked even when it is ignored itself (as
    ripgrep searches a path it is given): then only the rules inside it count.
    """
    if not (top == root or top.is_relative_to(root)):
        return Ignores()
    exclude = _load(root / ".git" / "info" / "exclude")
    ignores = Ignores(((root, exclude),)) if exclude else Ignores()
    if top != root:
        above = reversed(top.relative_to(root).parents[:-1])
        for directory in [root, *(root / part for part in above)]:
            ignores = ignores.descend(directory)
    if top != root and ignores.ignored(top, is_dir=True):
        return Ignores()
    return ignores


def rules_above(root: Path, top: Path) -> list[str]:
    """``ignores_above`` as the lines of one ignore file whose patterns are relative to ``root``.

    ripgrep given a subdirectory reads the ignore files inside it; these are the
    ones above it, for its ``--ignore-file`` (run from ``root``; later lines win,
    as deeper files do). Empty when nothing above applies.
    """
    if top == root or not top.is_dir() or not ignores_above(root, top).rules:
        return []
    lines = _lines(root / ".git" / "info" / "exclude")
    for rel in [Path(), *reversed(top.relative_to(root).parents[:-1])]:
        base = "" if rel == Path() else rel.as_posix() + "/"
        lines += [_rebase(line, base) for line in _lines(root / rel / ".gitignore")]
    return lines


def _rebase(line: str, base: str) -> str:
    """A pattern of ``base``'s .gitignore, for a file at the root: anchored ones get ``/base``."""
    bang = "!" if line.startswith("!") else ""
    pattern = line.removeprefix(bang)
    # A "/" before the end anchors a pattern to its file's directory; "*.log" matches anywhere.
    if not base or line.startswith("#") or "/" not in pattern.rstrip().rstrip("/"):
        return line
    return f"{bang}/{base}{pattern.removeprefix('/')}"


def excluded(root: Path, top: Path, path: Path) -> bool:
    """Whether a walk of ``top`` would leave out ``path`` (an open document, say)."""
    if path == top:
        return False
    rel = path.relative_to(top)
    if ".git" in rel.parts:
        return True
    ignores = ignores_above(root, top).descend(top)
    here = top
    for part in rel.parts[:-1]:
        here = here / part
        if ignores.ignored(here, is_dir=True):
            return True
        ignores = ignores.descend(here)
    return ignores.ignored(path, is_dir=False)


def enters(root: Path, directory: Path) -> bool:
    """Whether a walk of ``root`` enters ``directory`` (a real directory below it, in no
    ignored directory, not ignored itself, not inside ``.git``)."""
    if not directory.is_dir() or directory.is_symlink():
        return False
    if directory == root:
        return True
    if not directory.is_relative_to(root) or ".git" in directory.relative_to(root).parts:
        return False
    ignores = ignores_above(root, root).descend(root)
    here = root
    for part in directory.relative_to(root).parts:
        here = here / part
        if ignores.ignored(here, is_dir=True):
            return False
        ignores = ignores.descend(here)
    return True


@dataclass(frozen=True)
class Entry:
    path: Path
    is_dir: bool
    is_link: bool
    depth: int


def walk(root: Path, top: Path, max_depth: int | None = None) -> Iterator[Entry]:
    """Everything under ``top`` that git would not ignore, in sorted tree order.

    ``.git`` is never entered; symbolic links are yielded but not followed.
    """
    yield from _walk(top, ignores_above(root, top), 1, max_depth)


def walk_files(root: Path, top: Path) -> Iterator[Path]:
    """The files a search of ``top`` reads: ``top`` itself when it is a file."""
    if top.is_file():
        yield top
    else:
        yield from (e.path for e in walk(root, top) if not e.is_dir and not e.is_link)


def _walk(directory: Path, ignores: Ignores, depth: int, max_depth: int | None) -> Iterator[Entry]:
    try:
        with os.scandir(directory) as scan:
            found = sorted(scan, key=lambda entry: entry.name)
    except OSError:
        return  # an unreadable directory is skipped, as ripgrep skips it
    # Most directories have none; on a filesystem that ignores case, ".GITIGNORE" is one.
    if any(item.name.casefold() == ".gitignore" for item in found):
        ignores = ignores.descend(directory)
    for item in found:
        if item.name == ".git":
            continue
        path = directory / item.name
        is_link = item.is_symlink()
        try:
            is_dir = item.is_dir()
        except OSError:
            is_dir = False
        if ignores.ignored(path, is_dir):
            continue
        yield Entry(path, is_dir, is_link, depth)
        if is_dir and not is_link and (max_depth is None or depth < max_depth):
            yield from _walk(path, ignores, depth + 1, max_depth)
