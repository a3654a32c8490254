"""Definitions by tree-sitter's tag queries, and how names are ranked against a query."""

from __future__ import annotations

from tree_sitter import Parser, QueryCursor

from tether.index.symbols import Definition, _query, definitions, like, rank
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
