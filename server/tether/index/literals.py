"""The trigrams every match of a regex must contain: how the index narrows a search.

A regex becomes a list of branches (its top-level alternatives), each a list of
lower-case ASCII trigrams that a line matching that branch must hold. The reading is
conservative by construction: whatever it does not understand (a group, a class, an
escape it does not know, a quantifier) ends the current run of literal characters
and adds nothing, so the index can let through too many files, never too few. A
pattern it cannot narrow at all (a branch with no trigram, extended mode, an unknown
letter escape) gives None: the search runs over every file.

The index folds ASCII case, so a case-sensitive pattern is narrowed by the same
trigrams. Under a case-insensitive search "k" and "s" are not used: Unicode case
folding matches them to the Kelvin sign and the long s, which the index may not fold.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Branches = list[list[str]]

MAX_TRIGRAMS = 24  # per branch: enough to be selective, few enough to query fast
# Escapes of punctuation that stand for the character itself (``\<`` is a word boundary).
_LITERAL_ESCAPES = frozenset(".\\()[]{}*+?|^$/-#&~ '\"!%,:;=@_`")
_CLASS_ESCAPES = frozenset("dDwWsSbBAzntrfv")  # one character each, or zero width
_EXTENDED = re.compile(r"\(\?[a-zA-Z-]*x")
_IGNORE_CASE = re.compile(r"\(\?[a-zA-Z]*i")
_FOLDS_BEYOND_ASCII = frozenset("kKsS")


class _Unknown(Exception):
    """The pattern holds something this reading does not know: no requirement at all."""


def required(pattern: str, ignore_case: bool) -> Branches | None:
    """The trigrams each alternative of ``pattern`` requires; None when it cannot narrow."""
    if _EXTENDED.search(pattern):
        return None  # whitespace and comments in the pattern are not literal
    ignore_case = ignore_case or bool(_IGNORE_CASE.search(pattern))
    try:
        branches = [_branch(part, ignore_case) for part in _alternatives(pattern)]
    except _Unknown:
        return None
    return branches if all(branches) else None


def _alternatives(pattern: str) -> list[str]:
    """``pattern`` split at its top-level ``|``."""
    parts: list[str] = []
    start = i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _class_end(pattern, i)
            continue
        if char == "(":
            i = _group_end(pattern, i)
            continue
        if char == "|":
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    parts.append(pattern[start:])
    return parts


def _branch(pattern: str, ignore_case: bool) -> list[str]:
    """The trigrams of one alternative's runs of literal characters."""
    runs: list[str] = []
    run: list[str] = []

    def cut() -> None:
        if len(run) >= 3:
            runs.append("".join(run))
        run.clear()

    i, literal = 0, False  # literal: the last atom was a character added to ``run``
    while i < len(pattern):
        char = pattern[i]
        if char in "?*" or (char == "{" and _repeat_min(pattern, i) == 0):
            if literal and run:
                run.pop()  # the atom it repeats may be absent
            cut()
            i = _after_quantifier(pattern, i)
            literal = False
            continue
        if char == "+" or char == "{":
            cut()  # the atom it repeats is present; what follows is not adjacent to it
            i = _after_quantifier(pattern, i)
            literal = False
            continue
        literal = False
        if char == "\\":
            if i + 1 >= len(pattern):
                raise _Unknown
            escaped = pattern[i + 1]
            if escaped in _LITERAL_ESCAPES:
                literal = _add(run, escaped, ignore_case, cut)
                i += 2
                continue
            cut()
            i = _after_escape(pattern, i)
            continue
        if char == "[":
            cut()
            i = _class_end(pattern, i)
            continue
        if char == "(":
            cut()
            i = _group_end(pattern, i)
            continue
        if char in ".^$)]}":
            cut()
        else:
            literal = _add(run, char, ignore_case, cut)
        i += 1
    cut()
    return _trigrams(runs)


def _add(run: list[str], char: str, ignore_case: bool, cut: Callable[[], None]) -> bool:
    """Add ``char`` to the run if the index can use it; else end the run."""
    usable = " " <= char <= "~" and not (ignore_case and char in _FOLDS_BEYOND_ASCII)
    if usable:
        run.append(char.lower())
        return True
    cut()
    return False


def _trigrams(runs: list[str]) -> list[str]:
    grams = dict.fromkeys(run[i : i + 3] for run in runs for i in range(len(run) - 2))
    chosen = list(grams)
    if len(chosen) > MAX_TRIGRAMS:  # spread over the runs rather than the first few
        step = len(chosen) / MAX_TRIGRAMS
        chosen = [chosen[int(k * step)] for k in range(MAX_TRIGRAMS)]
    return chosen


def _after_escape(pattern: str, i: int) -> int:
    """Past the escape at ``i`` that is not a literal character."""
    letter = pattern[i + 1]
    if letter in _CLASS_ESCAPES or not letter.isalnum():
        return i + 2
    if letter in "xpPuU":
        if i + 2 < len(pattern) and pattern[i + 2] == "{":
            end = pattern.find("}", i + 3)
            if end < 0:
                raise _Unknown
            return end + 1
        width = {"x": 2, "u": 4, "U": 8}.get(letter, 1)
        return i + 2 + width
    raise _Unknown  # a letter escape not known here (\Q, \k<name>, \1...)


def _class_end(pattern: str, i: int) -> int:
    """Past the character class opening at ``i`` (nested classes included, as ripgrep
    reads them)."""
    i += 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1  # a "]" first is a literal member
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
        elif char == "[":
            i = _class_end(pattern, i)
        elif char == "]":
            return i + 1
        else:
            i += 1
    raise _Unknown  # unclosed: ripgrep refuses it anyway


def _group_end(pattern: str, i: int) -> int:
    """Past the group opening at ``i``."""
    depth = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            i = _class_end(pattern, i)
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        i += 1
        if depth == 0:
            return i
    raise _Unknown


def _repeat_min(pattern: str, i: int) -> int | None:
    """The least count of a ``{n}``, ``{n,}`` or ``{n,m}`` at ``i``; None if it is none."""
    match = re.match(r"\{\s*(\d+)\s*(,\s*\d*\s*)?\}", pattern[i:])
    return int(match.group(1)) if match else None


def _after_quantifier(pattern: str, i: int) -> int:
    if pattern[i] == "{":
        end = pattern.find("}", i)
        if end < 0 or _repeat_min(pattern, i) is None:
            raise _Unknown  # a "{" that repeats nothing: leave the pattern to ripgrep
        i = end + 1
    else:
        i += 1
    if i < len(pattern) and pattern[i] in "?+":
        i += 1  # lazy (or possessive) form
    return i
