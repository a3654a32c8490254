"""A tree-sitter parse that gives up once past its time.

py-tree-sitter holds the GIL while it parses, and a text can be made slow to parse: 500 KB
of ``x!`` repeated took tree-sitter's JavaScript parser 11 s (22 µs a byte, where real
code costs about 0.15), time in which the server answered nothing. So the text is handed
over by a reading function, the one form of ``Parser.parse`` that takes a
``progress_callback``, and the parse stops when the callback says the time is up.
"""

from __future__ import annotations

import time

from tree_sitter import Language, Parser, Point, Tree

# A parse may take a quarter second and 1.5 µs a byte, 5 s at most: 0.6 s for 230 KB, 3.4 s
# for the 2 MiB the index reads at most. Real code costs a tenth of that: of the 2,700
# files over 20 KB in the stdlib and this project's dependencies, the median parsed at
# 0.14 µs a byte, the slowest at 0.66. A text that costs more is stopped, having held the
# server's GIL no longer than that.
PARSE_BASE_S = 0.25
PARSE_S_PER_BYTE = 1.5e-6
PARSE_MAX_S = 5.0
# What each read hands the parser. Node.text reads the source again through the same
# function: a small piece keeps a name's text from copying much (outlining _pydecimal.py
# took 24 ms so, 43 with pieces of 16 KiB, 21 parsed from the bytes).
_PIECE = 4096


class TooSlow(Exception):
    """The parse ran past its budget and was stopped."""


def parse(language: Language, data: bytes, old_tree: Tree | None = None) -> Tree:
    """``data``'s syntax tree (edited from ``old_tree`` when given); TooSlow past its
    budget (``budget_s``)."""
    allowed = budget_s(len(data))
    deadline = time.monotonic() + allowed

    def read(byte: int, _: Point) -> bytes:
        return data[byte : byte + _PIECE]

    def past(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline

    parser = Parser(language)
    try:
        if old_tree is None:  # the binding takes no None for it
            return parser.parse(read, progress_callback=past)
        return parser.parse(read, old_tree, progress_callback=past)
    except ValueError:  # "Parsing failed": what tree-sitter says when the callback stops it
        if time.monotonic() > deadline:
            raise TooSlow(f"its parse took longer than {allowed:.2g} s") from None
        raise


def budget_s(size: int) -> float:
    """How long a parse of ``size`` bytes may take."""
    return min(PARSE_MAX_S, PARSE_BASE_S + size * PARSE_S_PER_BYTE)
