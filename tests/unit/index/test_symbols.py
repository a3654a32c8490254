"""Definitions by tree-sitter's tag queries, and how names are ranked against a query."""

from __future__ import annotations

import pytest
from tree_sitter import Parser, QueryCursor

from tether.index.symbols import MAX_START_DEPTH, Definition, _query, definitions, like, rank
from tether.tools import parsing
from tether.tools.outline import grammar_of


def test_python_definitions() -> None:
    text = "LIMIT = 3\nclass Parser:\n    def feed(self):\n        pass\n"
    assert definitions(text, ".py") == [
        Definition("LIMIT", "constant", 1),
        Definition("Parser", "class", 2),
        Definition("feed", "function", 3),
    ]


def test_javascript_and_typescript_definitions() -> None:
    assert definitions("function go() {}\nclass A { run() {} }\n", ".js") == [
        Definition("go", "function", 1),
        Definition("A", "class", 2),
        Definition("run", "method", 2),
    ]
    found = definitions("interface Shape { area(): number }\nfunction f(): void {}\n", ".ts")
    assert Definition("Shape", "interface", 1) in found
    assert Definition("f", "function", 2) in found


def test_go_and_rust_definitions() -> None:
    assert definitions("package m\nfunc Run() {}\ntype T struct{}\n", ".go") == [
        Definition("Run", "function", 2),
        Definition("T", "type", 3),
    ]
    found = definitions("struct S;\nimpl S { fn m(&self) {} }\n", ".rs")
    assert [d.name for d in found] == ["S", "m"]  # a method matched twice is kept once


def test_other_languages_have_none() -> None:
    assert definitions("def f(): pass\n", ".txt") == []


def test_rank_prefers_exact_then_prefix_substring_and_letters_in_order() -> None:
    names = ["parse_header", "HeaderParser", "Parser", "parser", "pars_e_r", "other"]
    ranked = sorted((r, n) for n in names if (r := rank("Parser", n)) is not None)
    assert [n for _, n in ranked] == [
        "Parser",
        "parser",
        "HeaderParser",
        "pars_e_r",
        "parse_header",  # p-a-r-s-e ... r: the letters in order, a longer name
    ]
    assert rank("Parser", "other") is None


def test_like_escapes_its_wildcards() -> None:
    assert like("a_%") == "%a%\\_%\\%%"


def test_the_tag_queries_match_definitions_only() -> None:
    """The tag queries' reference patterns (calls, uses) are turned off: they made three in
    four of a Python file's matches, all dropped, and took most of the time."""
    calls = {
        ".py": "run(x)\nobj.method()\n",
        ".js": "run(x);\nobj.method();\nnew Thing();\n",
        ".ts": "run(x);\nobj.method();\nlet y: Shape = z;\n",
        ".go": "package m\nvar _ = run(obj.Method())\n",
        ".rs": "static X: T = run!(obj.method());\n",
    }
    for suffix, text in calls.items():
        grammar = grammar_of(suffix)
        assert grammar is not None
        language, module, function = grammar
        tree = Parser(language).parse(text.encode())
        assert QueryCursor(_query(module, function)).matches(tree.root_node) == [], suffix
        assert definitions(text, suffix) == [], suffix


def test_definitions_around_a_syntax_error_are_kept() -> None:
    """Only the subtrees without an error are queried: the class whose body holds the
    broken line loses its own name, never the definitions beside or inside it."""
    text = (
        "def a():\n    pass\n\nclass B:\n    def broken(:\n        pass\n\n"
        "    def good(self):\n        pass\n\ndef c():\n    pass\n"
    )
    assert definitions(text, ".py") == [
        Definition("a", "function", 1),
        Definition("good", "function", 8),
        Definition("c", "function", 11),
    ]


@pytest.mark.timeout(30)
def test_nesting_made_to_be_slow_to_query_is_walked_once() -> None:
    """A tag query's time grows with the square of the nesting it walks: 200,000 unclosed
    "[" (hidden in an error) took it ~40 s, 20,000 nested Rust modules ~11 s; the query
    now walks only error-free subtrees, and starts no match below MAX_START_DEPTH."""
    assert definitions("x = " + "[" * 200_000, ".py") == []
    nested = definitions("mod m {\n" * 20_000 + "}" * 20_000, ".rs")
    assert nested[0] == Definition("m", "module", 1)
    assert len(nested) == MAX_START_DEPTH // 2  # a module and its body: two levels each


@pytest.mark.timeout(5)
def test_a_text_made_to_be_slow_to_parse_is_given_up_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """1 MB of "x!" takes tree-sitter's JavaScript parser ~20 s, holding the GIL."""
    monkeypatch.setattr(parsing, "PARSE_BASE_S", 0.1)
    monkeypatch.setattr(parsing, "PARSE_S_PER_BYTE", 0)
    with pytest.raises(parsing.TooSlow):
        definitions("x = 1\n" + "x!" * 500_000, ".js")
    assert definitions("function go() {}\n", ".js") == [Definition("go", "function", 1)]
