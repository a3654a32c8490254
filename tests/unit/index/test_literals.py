"""The trigrams a regex requires: never one that a match could lack."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from tether.index.literals import required
from tether.index.trigrams import document


def test_a_literal_requires_its_words_trigrams_folded_to_lower_case() -> None:
    assert required("def FooBar", ignore_case=False) == [["def", "foo", "oob", "oba", "bar"]]
    assert required("a_b1 = x", ignore_case=False) == [["a_b", "_b1"]]


def test_a_literal_of_no_word_of_three_characters_cannot_narrow() -> None:
    assert required("a = b", ignore_case=False) is None
    assert required("->", ignore_case=False) is None
    assert required("é·ü€", ignore_case=False) is None


def test_each_top_level_alternative_is_a_branch() -> None:
    assert required("TODO|FIXME", ignore_case=False) == [["tod", "odo"], ["fix", "ixm", "xme"]]


def test_an_alternative_without_a_trigram_cannot_narrow() -> None:
    assert required("TODO|x", ignore_case=False) is None
    assert required(r"\w+", ignore_case=False) is None


def test_optional_atoms_and_groups_break_runs() -> None:
    assert required("colou?r", ignore_case=False) == [["col", "olo"]]
    assert required("abc(d|e)fgh", ignore_case=False) == [["abc", "fgh"]]
    assert required("ab+cde", ignore_case=False) == [["cde"]]
    assert required("abcd{0,2}xyz", ignore_case=False) == [["abc", "xyz"]]
    assert required(r"raise \w+Error\(", ignore_case=False) == [
        ["rai", "ais", "ise", "err", "rro", "ror"]
    ]


def test_escapes_that_are_not_characters_contribute_nothing() -> None:
    assert required(r"\x41bcd", ignore_case=False) == [["bcd"]]
    assert required(r"a\<bcd", ignore_case=False) == [["bcd"]]
    assert required(r"\p{Greek}xyz", ignore_case=False) == [["xyz"]]
    assert required(r"\Qabc\E", ignore_case=False) is None  # not known: no narrowing


def test_extended_mode_cannot_be_narrowed() -> None:
    assert required("(?x) a b c d", ignore_case=False) is None


def test_ignoring_case_leaves_out_letters_that_fold_beyond_ascii() -> None:
    assert required("kabcs", ignore_case=True) == [["abc"]]
    assert required("(?i)kabcs", ignore_case=False) == [["abc"]]
    assert required("kabcs", ignore_case=False) == [["kab", "abc", "bcs"]]


def test_classes_are_skipped_whole_nested_ones_too() -> None:
    assert required("[[:alpha:]x|yz]abc", ignore_case=False) == [["abc"]]
    assert required("[]abc]def", ignore_case=False) == [["def"]]


_ATOMS = st.sampled_from(
    [
        "a",
        "b",
        "c",
        "ab",
        "abc",
        "x",
        " ",
        ".",
        "\\.",
        "(",
        ")",
        "|",
        "?",
        "*",
        "+",
        "[a-c]",
        "{2}",
        "{0,1}",
        "\\w",
        "\\d",
        "^",
        "$",
        "(?i)",
        "\\b",
        "\\(",
        "k",
        "S",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(_ATOMS, max_size=10),
    st.one_of(st.none(), st.text(alphabet="abcxkS .()", max_size=30)),
    st.booleans(),
    st.data(),
)
def test_a_line_that_matches_holds_every_trigram_of_some_branch(
    parts: list[str], line: str | None, ignore_case: bool, data: st.DataObject
) -> None:
    pattern = "".join(parts)
    try:
        regex = re.compile(pattern, re.IGNORECASE if ignore_case else 0)
    except (re.error, OverflowError):
        return
    branches = required(pattern, ignore_case)
    if branches is None:
        return
    if line is None:  # a line made to match (a random one seldom does)
        line = data.draw(st.from_regex(regex).filter(lambda text: "\n" not in text))
    if not regex.search(line):
        return
    kept = set(document(line.encode()).split())  # what the index keeps of the line
    assert any(all(gram in kept for gram in branch) for branch in branches)
