"""A tree-sitter parse that gives up once past its time, and otherwise gives the tree a
parse of the bytes gives."""

from __future__ import annotations

import pytest
from tree_sitter import Parser

from tether.tools import parsing
from tether.tools.outline import grammar_of
from tether.tools.parsing import TooSlow, parse

SOURCE = "".join(f"def f{i}(x):\n    return [x, {{'k': x}}]  # é\n\n" for i in range(2_000))


def test_the_tree_is_the_one_the_bytes_parse_to() -> None:
    grammar = grammar_of(".py")
    assert grammar is not None
    data = SOURCE.encode()
    tree = parse(grammar[0], data)  # 90 KB: read in many pieces
    assert str(tree.root_node) == str(Parser(grammar[0]).parse(data).root_node)
    last = tree.root_node.children[-1].child_by_field_name("name")
    assert last is not None and last.text == b"f1999"  # text read back through the pieces
    at = data.rfind(b"def f1999") + 4
    row = data.count(b"\n", 0, at)
    edited = data[:at] + b"g" + data[at + 1 :]
    tree.edit(at, at + 1, at + 1, (row, 4), (row, 5), (row, 5))
    again = parse(grammar[0], edited, tree)
    assert str(again.root_node) == str(Parser(grammar[0]).parse(edited).root_node)


@pytest.mark.timeout(5)
def test_a_parse_past_its_budget_stops_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    """1 MB of "x!" takes tree-sitter's JavaScript parser ~20 s, holding the GIL."""
    monkeypatch.setattr(parsing, "PARSE_BASE_S", 0.1)
    monkeypatch.setattr(parsing, "PARSE_S_PER_BYTE", 0)
    grammar = grammar_of(".js")
    assert grammar is not None
    with pytest.raises(TooSlow, match=r"^its parse took longer than 0.1 s$"):
        parse(grammar[0], ("x = 1\n" + "x!" * 500_000).encode())


def test_the_budget_grows_with_the_text_and_stops_at_five_seconds() -> None:
    assert parsing.budget_s(0) == 0.25
    assert parsing.budget_s(230_000) == pytest.approx(0.595)  # _pydecimal.py parses in 0.03
    assert parsing.budget_s(2 * 2**20) == pytest.approx(3.4, abs=0.05)  # the index's cap
    assert parsing.budget_s(20 * 2**20) == 5.0  # outline reads up to 20 MiB
