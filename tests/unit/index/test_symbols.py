"""Definitions by tree-sitter's tag queries, and how names are ranked against a query."""

from __future__ import annotations

from tether.index.symbols import Definition, definitions, like, rank


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
