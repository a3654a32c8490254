"""The files the workspace index says a search can match, judged now, for ripgrep to read.

The index (``ctx.index``) knows only the workspace's own files, as the walk of its root
sees them, so it narrows a search of the root or of a directory the walk enters; a
search of one file, or of an ignored directory named explicitly, goes the usual way.
ripgrep reads a path it is handed even through a symbolic link, so each file is judged
right before: a regular file, not a link, in a directory that is where its name says
(none of its parents swapped for a link since the index saw it).
"""

from __future__ import annotations

import asyncio
import os
import stat
from pathlib import Path

from tether.tools.grep_search import Search
from tether.tools.ignore import enters

# How much of a command line the names may take: Windows allows 32,767 characters in all;
# elsewhere the limit is at least 2 MB (arguments and environment together).
_ARGV_BUDGET = 24_000 if os.name == "nt" else 1_000_000


async def narrowed(search: Search) -> list[bytes] | None:
    """The workspace-relative names of the files to search, in ripgrep's order; None when
    the index cannot narrow this search (every file is searched)."""
    ctx, top = search.ctx, search.top
    if top in search.live or not enters(ctx.workspace, top):
        return None
    files = await ctx.index.candidates(search.pattern, not search.case_sensitive)
    if files is None:
        return None
    inside = [path for path in files if path.is_relative_to(top) and search.on_disk(path)]
    names = await asyncio.to_thread(_judged, ctx.workspace, inside)
    if sum(len(name) + 1 for name in names) > _ARGV_BUDGET:
        return None  # too many to hand ripgrep as arguments: it walks everything instead
    return names


def _judged(root: Path, paths: list[Path]) -> list[bytes]:
    """The regular files among ``paths`` whose directories are real, sorted as ripgrep's
    ``--sort path`` walk meets them (name by name, as bytes)."""
    real: dict[str, bool] = {str(root): True}

    def is_real(directory: str) -> bool:  # a directory, no link, in a real directory
        known = real.get(directory)
        if known is None:
            try:
                mode = os.lstat(directory).st_mode
            except OSError:
                mode = 0
            known = stat.S_ISDIR(mode) and is_real(os.path.dirname(directory))
            real[directory] = known
        return known

    start = len(str(root)) + 1
    names: list[tuple[list[bytes], bytes]] = []
    for path in paths:
        text = str(path)
        if not is_real(os.path.dirname(text)):
            continue
        try:
            if not stat.S_ISREG(os.lstat(text).st_mode):
                continue
        except OSError:
            continue
        name = os.fsencode(text[start:].replace(os.sep, "/"))  # Windows: "\\" apart
        names.append((name.split(b"/"), name))
    names.sort()
    return [name for _, name in names]
