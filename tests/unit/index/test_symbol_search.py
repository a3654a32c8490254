"""A query for definitions: the index's rows and the open documents' own, ranked."""

from __future__ import annotations

from pathlib import Path

from tether.index.symbol_search import ranked
from tether.tools.index_view import SymbolHit

ROOT = Path("/work/ws")


def shown(hits: list[SymbolHit]) -> list[tuple[str, int, str, str]]:
    return [(hit.path.relative_to(ROOT).as_posix(), hit.line, hit.kind, hit.name) for hit in hits]


def test_the_best_match_comes_first_then_by_path_and_line() -> None:
    rows = [
        (b"b.py", "parse_all", "function", 3),
        (b"a.py", "Parser", "class", 9),
        (b"a.py", "parse", "function", 1),
        (b"c.py", "unrelated", "function", 1),
        (b"a.py", "reparse", "function", 5),
    ]
    hits = ranked("parse", None, ROOT, ROOT, rows, {})
    assert shown(hits) == [
        ("a.py", 1, "function", "parse"),  # the exact name
        ("a.py", 9, "class", "Parser"),  # in another case
        ("b.py", 3, "function", "parse_all"),  # a prefix
        ("a.py", 5, "function", "reparse"),  # a substring
    ]


def test_an_open_documents_definitions_come_from_its_live_text() -> None:
    rows = [(b"a.py", "old_name", "function", 1), (b"b.py", "kept_name", "function", 2)]
    live = {ROOT / "a.py": "def new_name():\n    pass\n\nclass NameHolder:\n    pass\n"}
    hits = ranked("name", None, ROOT, ROOT, rows, live)
    assert ("a.py", 1, "function", "old_name") not in shown(hits)  # the disk's, unsaved over
    assert set(shown(hits)) == {
        ("a.py", 1, "function", "new_name"),
        ("a.py", 4, "class", "NameHolder"),
        ("b.py", 2, "function", "kept_name"),
    }


def test_an_open_document_outside_the_directory_or_of_another_kind_is_left_out() -> None:
    live = {
        ROOT / "src" / "a.py": "def wanted():\n    pass\n\nclass Wanted:\n    pass\n",
        ROOT / "other" / "b.py": "def wanted():\n    pass\n",
        ROOT / "src" / "notes.txt": "def wanted():\n",  # no grammar for it
    }
    hits = ranked("wanted", "function", ROOT, ROOT / "src", [], live)
    assert shown(hits) == [("src/a.py", 1, "function", "wanted")]
