"""The syntax trees of the files outlined lately: a text seen before costs a comparison,
a text edited since an incremental parse from its last tree.

py-tree-sitter holds the GIL while it parses (15 ms for a 230 KB Python file), so no
sibling read of the reply gets a turn meanwhile; and an agent outlines the same file
again and again between its edits. tree-sitter's incremental parse gives the tree a
fresh parse gives (``test_syntax_trees`` checks it on random edits), in about a third
of the time for one edit; an unchanged text is not parsed at all.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from typing import NamedTuple

from tree_sitter import Language, Point, Tree

from tether.tools.parsing import TooSlow, parse

Outline = Callable[[Tree], list[str]]
MAX_TREE_TEXT = 2**20  # a longer text's tree (some 20 MB) is not kept for the next edit
MAX_VERDICTS = 32  # texts too long to keep whose parse was given up on, remembered by digest


@dataclass(frozen=True)
class _Kept:
    data: bytes
    tree: Tree | None  # kept for the latest few texts only
    lines: tuple[str, ...]
    slow: str | None = None  # why the parse of this text was given up on


class RecentTrees:
    """The last outlines, one per key (a file and its grammar), with their texts (at most
    ``max_bytes``); the trees of the latest ``max_trees`` only: a tree takes about 20 times
    its text's size (5 MB for a 230 KB Python file)."""

    def __init__(
        self, max_entries: int = 32, max_bytes: int = 8 * 2**20, max_trees: int = 2
    ) -> None:
        self._max_entries, self._max_bytes, self._max_trees = max_entries, max_bytes, max_trees
        # Held through a parse: outlines are made in worker threads, and a tree is edited
        # in place. Parses would not overlap anyway: each holds the GIL.
        self._lock = threading.Lock()
        self._kept: OrderedDict[Hashable, _Kept] = OrderedDict()
        self._bytes = 0
        # A text past ``max_bytes`` is not kept, but a verdict on it is (its digest and
        # why): else a hostile file of 8 to 20 MiB held the GIL for the parse's whole
        # budget (5 s) at every call.
        self._given_up: OrderedDict[Hashable, tuple[bytes, str]] = OrderedDict()

    def lines(self, key: Hashable, language: Language, data: bytes, outline: Outline) -> list[str]:
        """``outline`` of ``data``'s tree, parsed only as far as ``data`` changed;
        ``parsing.TooSlow`` for a text whose parse ran past its budget."""
        with self._lock:
            kept = self._kept.pop(key, None)
            if kept is not None:
                self._bytes -= len(kept.data)
            if len(data) > self._max_bytes:
                return self._unkept(key, language, data, outline)
            if kept is not None and kept.data == data:
                if kept.slow is not None:  # given up on: the GIL is not held for it twice
                    self._keep(key, kept)
                    raise TooSlow(kept.slow)
                tree, lines = kept.tree, list(kept.lines)
            else:
                try:
                    if kept is None or kept.tree is None:
                        tree = parse(language, data)
                    else:  # the old tree (out of the cache now) is told the edit, and reused
                        kept.tree.edit(*_edit(kept.data, data))
                        tree = parse(language, data, kept.tree)
                except TooSlow as slow:
                    self._keep(key, _Kept(data, None, (), str(slow)))
                    raise
                lines = outline(tree)
            self._keep(key, _Kept(data, tree, tuple(lines)))
            return lines

    def known(self, key: Hashable, data: bytes) -> list[str] | None:
        """The outline of ``data`` when it is the text last outlined under ``key``: a
        comparison, no parse, fit for the event loop. None otherwise, and while a thread
        holds the trees (its parse may take seconds): ``lines`` then, in a thread."""
        if not self._lock.acquire(blocking=False):
            return None
        try:
            kept = self._kept.get(key)
            if kept is None or kept.slow is not None or kept.data != data:
                return None
            self._kept.move_to_end(key)  # the latest, as ``lines`` would keep it
            return list(kept.lines)
        finally:
            self._lock.release()

    def _unkept(
        self, key: Hashable, language: Language, data: bytes, outline: Outline
    ) -> list[str]:
        """``lines`` for a text too long to keep: parsed whole each time, unless it was
        given up on before (the same digest)."""
        digest = hashlib.blake2b(data, digest_size=16).digest()
        given_up = self._given_up.get(key)
        if given_up is not None and given_up[0] == digest:
            raise TooSlow(given_up[1])
        self._given_up.pop(key, None)
        try:
            tree = parse(language, data)
        except TooSlow as slow:
            self._given_up[key] = (digest, str(slow))
            while len(self._given_up) > MAX_VERDICTS:
                self._given_up.popitem(last=False)
            raise
        return outline(tree)

    def _keep(self, key: Hashable, kept: _Kept) -> None:
        if len(kept.data) > MAX_TREE_TEXT:  # its outline is kept, not its tree's megabytes
            kept = replace(kept, tree=None)
        self._kept[key] = kept
        self._bytes += len(kept.data)
        while len(self._kept) > self._max_entries or self._bytes > self._max_bytes:
            _, dropped = self._kept.popitem(last=False)
            self._bytes -= len(dropped.data)
        for older in list(self._kept)[: -self._max_trees or None]:
            if self._kept[older].tree is not None:
                self._kept[older] = replace(self._kept[older], tree=None)


class Edit(NamedTuple):
    """An edit as ``Tree.edit`` takes it, in its order."""

    start_byte: int
    old_end_byte: int
    new_end_byte: int
    start_point: Point
    old_end_point: Point
    new_end_point: Point


def _edit(old: bytes, new: bytes) -> Edit:
    """The one edit that turns ``old`` into ``new``: what lies between their common start
    and their common end."""
    start = _common(old, new, min(len(old), len(new)), ahead=True)
    end = _common(old, new, min(len(old), len(new)) - start, ahead=False)
    old_end, new_end = len(old) - end, len(new) - end
    return Edit(
        start, old_end, new_end, _point(old, start), _point(old, old_end), _point(new, new_end)
    )


def _common(a: bytes, b: bytes, most: int, ahead: bool) -> int:
    """How many bytes ``a`` and ``b`` share at their start (``ahead``) or end, ``most`` at
    most: a bisection of slice comparisons, each in C, their lengths halving."""
    same, differs = 0, most + 1  # a span of ``same`` bytes matches; one of ``differs`` not
    while differs - same > 1:
        mid = (same + differs) // 2
        if ahead:
            equal = a[same:mid] == b[same:mid]
        else:
            equal = a[len(a) - mid : len(a) - same] == b[len(b) - mid : len(b) - same]
        same, differs = (mid, differs) if equal else (same, mid)
    return same


def _point(data: bytes, at: int) -> Point:
    """The row and column (in bytes) of offset ``at``, as tree-sitter counts them."""
    return Point(data.count(b"\n", 0, at), at - (data.rfind(b"\n", 0, at) + 1))
