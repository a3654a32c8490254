"""The files the workspace index says a search can match, judged now, for ripgrep to read.

The index (``ctx.index``) knows only the workspace's own files, as the walk of its root
sees them, so it narrows a search of the root or of a directory the walk enters; a
search of one file, or of an ignored directory named explicitly, goes the usual way.
ripgrep reads a path it is handed even through a symbolic link, so each file is judged
right before: a regular file, not a link, in a directory that is where its name says
(none of its parents swapped for a link since the index saw it). A directory's files are
judged by its listing while it is as it was listed (``listing.Listings``): 727 candidates
of a search of the standard library took 4.1 ms of ``lstat`` each, and 1.4 ms so. A
crowded directory (``Listings.CROWDED``) is not listed: its files are judged each by itself.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tether.tools.ignore import enters
from tether.tools.listing import LISTINGS

if TYPE_CHECKING:
    from tether.tools.grep_search import Search


async def narrowed(search: Search) -> list[bytes] | None:
    """The workspace-relative names of the files to search, in ripgrep's order, to be
    judged (``judged``) right before they are read; None when the index cannot narrow
    this search (every file is searched)."""
    ctx, top = search.ctx, search.top
    if top in search.live or not enters(ctx.workspace, top):
        return None
    names = await ctx.index.candidates(search.pattern, not search.case_sensitive)
    if names is None:
        return None
    if top != ctx.workspace:
        below = os.fsencode(top.relative_to(ctx.workspace).as_posix()) + b"/"
        names = [name for name in names if name.startswith(below)]
    if search.live or search.glob:  # the few calls that need each name as a path
        names = [name for name in names if search.on_disk(ctx.workspace / os.fsdecode(name))]
    return in_ripgreps_order(names)


def in_ripgreps_order(names: list[bytes]) -> list[bytes]:
    """Sorted name by name, as ripgrep's ``--sort path`` walk meets them: "/" sorts before
    every byte a name can hold, as NUL does."""
    return sorted(names, key=lambda name: name.replace(b"/", b"\0"))


def judged(root: Path, names: Sequence[bytes]) -> list[bytes]:
    """The regular files among ``names`` whose directories are real, in their order
    (judged right before ripgrep reads them: it would follow a link it is handed).

    A file is judged by its directory's listing while the directory is as it was listed
    (``Listings.regular_files``: a file swapped for a link moved the directory's times),
    else by an ``lstat`` of its own: most candidates share their directory with others."""
    top = str(root)
    base = os.fsencode(root) + b"/"
    # Per directory: False (not a real one), True (judge each file), or its regular files.
    known: dict[bytes, frozenset[str] | bool] = {}

    def directory(rel: bytes) -> frozenset[str] | bool:
        if (found := known.get(rel)) is None:
            try:
                status: os.stat_result | None = os.lstat(base + rel if rel else root)
            except OSError:
                status = None
            if not rel:  # the workspace itself, real by construction
                found = True
            else:  # a directory, no link, in a real directory
                found = bool(status and stat.S_ISDIR(status.st_mode))
                found = found and directory(rel.rpartition(b"/")[0]) is not False
            if found and status is not None:
                where = top + "/" + os.fsdecode(rel) if rel else top
                files = LISTINGS.regular_files(where, status)
                found = True if files is None else files
            known[rel] = found
        return found

    kept: list[bytes] = []
    for name in names:
        parent, _, leaf = name.rpartition(b"/")
        files = directory(parent)
        if files is False:
            continue
        if files is not True:
            if os.fsdecode(leaf) in files:
                kept.append(name)
            continue
        try:
            if stat.S_ISREG(os.lstat(base + name).st_mode):
                kept.append(name)
        except OSError:
            continue
    return kept
