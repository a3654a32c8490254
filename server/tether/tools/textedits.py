"""Pure text work behind ``patch``: find each ``old`` once, apply, count and show the change."""

from __future__ import annotations

import difflib
import itertools
from collections.abc import Sequence

from tether.errors import ToolError
from tether.tools.base import Preview, Replacement

PREVIEW_LINES = 40


def occurrences(text: str, old: str, stop: int = 100) -> list[int]:
    """Where ``old`` starts in ``text``, overlapping matches included (at most ``stop``)."""
    found: list[int] = []
    at = text.find(old)
    while at >= 0 and len(found) < stop:
        found.append(at)
        at = text.find(old, at + 1)
    return found


def replacements(text: str, edits: Sequence[tuple[str, str]], name: str) -> list[Replacement]:
    """Each ``(old, new)`` as a replacement of its one occurrence in ``text``, sorted.

    Every offset is into ``text`` as given: edits never see each other's results.
    A file with CRLF line endings also matches an ``old`` written with bare LFs.
    """
    spans: list[tuple[Replacement, int]] = []
    crlf = "\r\n" in text
    for number, (old, new) in enumerate(edits, start=1):
        found = occurrences(text, old)
        if not found and crlf and "\r" not in old:
            old, new = old.replace("\n", "\r\n"), new.replace("\r\n", "\n").replace("\n", "\r\n")
            found = occurrences(text, old)
        if not found:
            raise ToolError(
                f"edit {number}: `old` not found in {name}; it must match the current text "
                "exactly, whitespace and indentation included (fs-read shows it)"
            )
        if len(found) > 1:
            times = f"{len(found)}" if len(found) < 100 else "100 or more"
            raise ToolError(
                f"edit {number}: `old` occurs {times} times in {name}; include more context "
                "to make it unique"
            )
        spans.append((Replacement(start=found[0], end=found[0] + len(old), new=new), number))
    spans.sort(key=lambda span: span[0].start)
    for (prev, a), (this, b) in itertools.pairwise(spans):
        if this.start < prev.end:
            first, second = sorted((a, b))
            raise ToolError(
                f"edits {first} and {second} overlap in {name}; merge them into one edit"
            )
    return [span for span, _ in spans]


def apply(text: str, changes: Sequence[Replacement]) -> str:
    """``text`` with sorted, non-overlapping replacements applied."""
    pieces: list[str] = []
    at = 0
    for change in changes:
        pieces += [text[at : change.start], change.new]
        at = change.end
    pieces.append(text[at:])
    return "".join(pieces)


def line_counts(before: str, after: str) -> tuple[int, int]:
    """Lines added and removed, as a unified diff counts them."""
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines())
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


def diff_lines(before: str | None, after: str, name: str) -> list[str]:
    """A unified diff (three lines of context), one string per line, no line ends."""
    old = (before or "").splitlines(keepends=True)
    new = after.splitlines(keepends=True)
    source = "/dev/null" if before is None else f"a/{name}"
    lines = difflib.unified_diff(old, new, source, f"b/{name}", n=3)
    return [line.rstrip("\r\n") for line in lines]


def preview(
    before: str | None, after: str, name: str, budget: int, limit: int = PREVIEW_LINES
) -> Preview:
    """The diff, whole when it fits in ``limit`` lines and ``budget`` characters; else as
    much as fits, and it says so."""
    lines = diff_lines(before, after, name)
    if not lines:
        return Preview(text=f"{name}: no change")
    shown: list[str] = []
    used = 0
    for line in lines[:limit]:
        if used + len(line) + 1 > budget - 80:
            break
        shown.append(line)
        used += len(line) + 1
    if len(shown) == len(lines):
        return Preview(text="\n".join(lines))
    cut = f"[the diff is cut: {len(lines) - len(shown)} more of its {len(lines)} lines not shown]"
    return Preview(text="\n".join([*shown, cut]), whole=False)


def hunk_headers(before: str | None, after: str, name: str, most: int = 5) -> list[str]:
    """The ``@@ -a,b +c,d @@`` lines of the change, so line numbers can be followed up."""
    heads = [line for line in diff_lines(before, after, name) if line.startswith("@@")]
    return heads if len(heads) <= most else [*heads[:most], f"… {len(heads) - most} more"]
