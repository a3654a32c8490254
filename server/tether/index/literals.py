"""The trigrams every match of a regex must contain: how the index narrows a search.

The index keeps of each file only the distinct trigrams of its runs of ASCII letters,
digits and "_" (``trigrams``: its other characters, and how often each trigram comes,
are left out). So a regex is read for those runs: it becomes a list of branches (its
top-level alternatives), each a list of lower-case trigrams of word characters that a
line matching that branch must hold, and each of them lies inside one of the file's
words. The reading is conservative by construction: whatever it does not understand (a
group, a class, an escape it does not know, a quantifier), and any character that is no
word character, ends the current run of literal characters and adds nothing, so the
index can let through too many files, never too few. A pattern it cannot narrow at all
(a branch with no trigram, extended mode, an unknown letter escape) gives None: the
search runs over every file.

The index folds ASCII case, so a case-sensitive pattern is narrowed by the same
trigrams. Under a case-insensitive search "k" and "s" are not used: Unicode case
folding matches them to the Kelvin sign and the long s, which the index may not fold.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from tether.index.trigrams import WORD

Branches = list[list[str]]

MAX_TRIGRAMS = 24  # per branch: enough to be selective, few enough to query fast
# Escapes of punctuation that stand for the character itself (``\<`` is a word boundary).
_LITERAL_ESCAPES = frozenset(".\\()[]{}*+?|^$/-#&~ '\"!%,:;=@_`")
_CLASS_ESCAPES = frozenset("dDwWsSbBAzntrfv")  # one character each, or zero width
_EXTENDED = re.compile(r"\(\?[a-zA-Z-]*x")
_IGNORE_CASE = re.compile(r"\(\?[a-zA-Z]*i")
_FOLDS_BEYOND_ASCII = frozenset("kKsS")
_REPEAT = re.compile(r"\{\s*(\d+)\s*(,\s*\d*\s*)?\}")
_WORD_CHARS = frozenset((WORD + WORD.upper()).decode())


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
    start = 0
    for at, _ in _atoms(pattern):
        if pattern[at] == "|":
            parts.append(pattern[start:at])
            start = at + 1
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

    literal = False  # the last atom was a character added to ``run``
    for at, end in _atoms(pattern):
        atom, char = pattern[at:end], pattern[at]
        if atom in ("?", "*") or (char == "{" and _repeat_min(atom) == 0):
            if literal and run:
                run.pop()  # the atom it repeats may be absent
            cut()
            literal = False
        elif atom == "+" or char == "{":
            if atom == "{":
                raise _Unknown  # a "{" that repeats nothing: leave the pattern to ripgrep
            cut()  # the atom it repeats is present; what follows is not adjacent to it
            literal = False
        elif char == "\\" and len(atom) == 2 and atom[1] in _LITERAL_ESCAPES:
            literal = _add(run, atom[1], ignore_case, cut)
        elif len(atom) > 1 or char in ".^$)]}":
            cut()  # an escape that is no character, a class, a group
            literal = False
        else:
            literal = _add(run, char, ignore_case, cut)
    cut()
    return _trigrams(runs)


def _add(run: list[str], char: str, ignore_case: bool, cut: Callable[[], None]) -> bool:
    """Add ``char`` to the run if the index can use it; else end the run."""
    usable = char in _WORD_CHARS and not (ignore_case and char in _FOLDS_BEYOND_ASCII)
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


def _atoms(pattern: str, i: int = 0) -> Iterator[tuple[int, int]]:
    """Where each atom of ``pattern`` from ``i`` on starts and ends: an escape, a character
    class, a group (each whole, nested ones included), a counted repetition ``{n,m}``,
    or one character. The one reading of the pattern's structure the others share."""
    while i < len(pattern):
        match pattern[i]:
            case "\\":
                end = _escape_end(pattern, i)
            case "[":
                end = _class_end(pattern, i)
            case "(":
                end = _group_end(pattern, i)
            case "{" if (repeat := _REPEAT.match(pattern, i)) is not None:
                end = repeat.end()
            case _:
                end = i + 1
        yield i, end
        i = end


def _escape_end(pattern: str, i: int) -> int:
    """Past the escape at ``i``."""
    if i + 1 >= len(pattern):
        raise _Unknown  # a trailing backslash: ripgrep refuses it
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
    raise _Unknown  # a letter escape not known here (\\Q, \\k<name>, \\1...)


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
    """Past the group opening at ``i``: its first top-level ")"."""
    for at, end in _atoms(pattern, i + 1):
        if pattern[at] == ")":
            return end
    raise _Unknown


def _repeat_min(atom: str) -> int | None:
    """The least count of a ``{n}``, ``{n,}`` or ``{n,m}``; None if ``atom`` is none."""
    match = _REPEAT.fullmatch(atom)
    return int(match.group(1)) if match else None
