"""A tree parsed again from its last tree is the tree a fresh parse gives."""

from __future__ import annotations

import random

import pytest
from tree_sitter import Parser, Point, Tree

from tests.unit.tools.test_outline import CASES
from tether.tools import syntax_trees
from tether.tools.outline import grammar_of
from tether.tools.parsing import TooSlow
from tether.tools.syntax_trees import RecentTrees, _common, _edit, _point

PIECES = ["def ", "class ", "(", ")", ":", "\n", "    ", "{", "}", "fn ", "x", "é", "😀", '"', "#"]


def shape(tree: Tree) -> list[str]:
    """Every node of the tree, with where it starts and ends (the lines an outline shows)."""
    nodes, todo = [], [tree.root_node]
    while todo:
        node = todo.pop()
        where = (node.start_byte, node.end_byte, tuple(node.start_point), tuple(node.end_point))
        nodes.append(f"{node.type} {where} {node.has_error}")
        todo.extend(reversed(node.children))
    return nodes


@pytest.mark.parametrize("name", list(CASES))
def test_random_edits_parse_as_a_fresh_parse_does(name: str) -> None:
    found = grammar_of("." + name.rpartition(".")[2])
    assert found is not None
    language = found[0]
    rng = random.Random(name)
    text = CASES[name][0]
    trees = RecentTrees()
    trees.lines(name, language, text.encode(), shape)
    for _ in range(150):
        at = rng.randrange(len(text) + 1)
        cut = rng.choice([0, 0, 1, 3, 20])
        added = "".join(rng.choice(PIECES) for _ in range(rng.choice([0, 1, 2, 5])))
        text = text[:at] + added + text[at + cut :]
        data = text.encode()
        assert trees.lines(name, language, data, shape) == shape(Parser(language).parse(data))


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (b"", b""),
        (b"", b"ab"),
        (b"ab", b""),
        (b"aaa", b"aaaa"),
        (b"abc", b"abc"),
        (b"x\ny", b"x\nzy"),
    ],
)
def test_an_edit_spans_only_what_changed(old: bytes, new: bytes) -> None:
    start, old_end, new_end, *_ = _edit(old, new)
    assert start <= old_end and start <= new_end  # the common start and end never overlap
    assert old[:start] + new[start:new_end] + old[old_end:] == new
    assert old[:start] == new[:start] and old[old_end:] == new[new_end:]


def test_the_common_start_and_end_are_the_longest() -> None:
    rng = random.Random(7)
    for _ in range(300):
        a = bytes(rng.choice(b"ab") for _ in range(rng.randrange(12)))
        b = bytes(rng.choice(b"ab") for _ in range(rng.randrange(12)))
        most = min(len(a), len(b))
        start = next((i for i in range(most) if a[i] != b[i]), most)
        assert _common(a, b, most, ahead=True) == start
        end = next((i for i in range(most) if a[-1 - i] != b[-1 - i]), most)
        assert _common(a, b, most, ahead=False) == end


def test_only_so_much_text_and_so_many_trees_are_kept() -> None:
    found = grammar_of(".py")
    assert found is not None
    trees = RecentTrees(max_entries=3, max_bytes=100, max_trees=1)

    def kept() -> dict[object, bool]:  # each key kept, and whether with its tree
        return {key: entry.tree is not None for key, entry in trees._kept.items()}

    for key in "abcd":
        trees.lines(key, found[0], b"def f(): pass\n", shape)
    assert kept() == {"b": False, "c": False, "d": True}
    trees.lines("big", found[0], b"x = 1\n" * 50, shape)  # past max_bytes alone: not kept
    assert kept() == {"b": False, "c": False, "d": True}
    trees.lines("b", found[0], b"def f(): pass\n", shape)  # seen before: kept again, treeless
    assert kept() == {"c": False, "d": False, "b": False}
    trees.lines("e", found[0], b"y = 2\n" * 13, shape)  # 78 bytes: the oldest make room
    assert kept() == {"b": False, "e": True}


def test_a_point_is_a_row_and_a_column_in_bytes() -> None:
    data = "ab\nçd\n".encode()
    assert [_point(data, at) for at in (0, 2, 3, 5, 6, 7)] == [
        Point(0, 0),
        Point(0, 2),
        Point(1, 0),
        Point(1, 2),  # "ç" is two bytes
        Point(1, 3),
        Point(2, 0),
    ]


def test_a_long_text_keeps_its_outline_but_not_its_tree(monkeypatch: pytest.MonkeyPatch) -> None:
    """A tree is some 20 times its text: a long file's would hold tens of megabytes."""
    found = grammar_of(".py")
    assert found is not None
    monkeypatch.setattr("tether.tools.syntax_trees.MAX_TREE_TEXT", 50)
    trees = RecentTrees()
    trees.lines("short", found[0], b"def f(): pass\n", shape)
    trees.lines("long", found[0], b"def f(): pass\n" * 10, shape)
    assert {key: entry.tree is not None for key, entry in trees._kept.items()} == {
        "short": True,
        "long": False,
    }


def test_a_text_too_long_to_keep_is_not_parsed_again_once_given_up_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Past the cache's bytes a text is not kept: its verdict is, by digest. Else a hostile
    file of 8 to 20 MiB held the GIL for the whole budget at every outline."""
    grammar = grammar_of(".js")
    assert grammar is not None
    language = grammar[0]
    parsed: list[int] = []

    def slow(language: object, data: bytes, old_tree: object = None) -> Tree:
        parsed.append(len(data))
        raise TooSlow("its parse took longer than 5 s")

    monkeypatch.setattr(syntax_trees, "parse", slow)
    recent = RecentTrees(max_bytes=1000)
    hostile, other = b"x!" * 1000, b"y!" * 1000
    for data in (hostile, hostile, other, hostile):
        with pytest.raises(TooSlow, match="longer than 5 s"):
            recent.lines("slow.js", language, data, lambda tree: [])
    assert parsed == [2000, 2000, 2000]  # the text changed in between: parsed again


def test_a_kept_outline_is_known_without_a_parse_unless_the_trees_are_busy() -> None:
    found = grammar_of(".py")
    assert found is not None
    trees = RecentTrees()
    text = b"def f(): pass\n"
    assert trees.known("a", text) is None  # never outlined
    lines = trees.lines("a", found[0], text, shape)
    assert trees.known("a", text) == lines
    assert trees.known("a", text + b"x = 1\n") is None  # changed since
    with trees._lock:  # a thread parses: the loop does not wait for it
        assert trees.known("a", text) is None


def test_a_text_given_up_on_is_not_known(monkeypatch: pytest.MonkeyPatch) -> None:
    found = grammar_of(".py")
    assert found is not None

    def slow(language: object, data: bytes, old_tree: object = None) -> Tree:
        raise TooSlow("its parse took longer than 5 s")

    monkeypatch.setattr(syntax_trees, "parse", slow)
    trees = RecentTrees()
    with pytest.raises(TooSlow):
        trees.lines("a", found[0], b"x = (\n", shape)
    assert trees.known("a", b"x = (\n") is None  # ``lines`` says why, in a thread
