"""index-symbols: definitions across the workspace from the index, live text first."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.unit.tools import Buffers, call, context, init_repo, write
from tether.errors import ToolError
from tether.index.workspace import WorkspaceIndex
from tether.tools import parsing
from tether.tools.base import ToolContext
from tether.tools.index_symbols import IndexSymbols, IndexSymbolsParams

SYMBOLS = IndexSymbols()


@pytest.fixture
async def ws(tmp_path: Path) -> Path:
    root = init_repo(tmp_path / "ws").resolve()
    write(root, ".gitignore", "build/\n")
    write(root, "pkg/parser.py", "class HeaderParser:\n    def parse(self):\n        pass\n")
    write(root, "pkg/util.py", "def parse_date(text):\n    pass\n\nclass Parser:\n    pass\n")
    write(root, "web/app.ts", "export class Parser {}\nfunction parseArgs(): void {}\n")
    write(root, "build/gen.py", "class Parser:\n    pass\n")
    return root


async def indexed(ws: Path, tmp_path: Path, buffers: Buffers | None = None) -> ToolContext:
    index = WorkspaceIndex(ws, tmp_path / "index.sqlite3")
    await index.build()
    index.follow()
    return replace(context(ws, buffers), index=index)


async def test_exact_names_come_first_then_prefixes_and_substrings(
    ws: Path, tmp_path: Path
) -> None:
    ctx = await indexed(ws, tmp_path)
    out = await call(SYMBOLS, ctx, query="Parser")
    assert out.splitlines() == [
        "pkg/util.py:4: class Parser",
        "web/app.ts:1: class Parser",
        "pkg/parser.py:1: class HeaderParser",
        "web/app.ts:2: function parseArgs",  # p-a-r-s-e-(A)r-gs: the letters in order
    ]


async def test_kind_and_path_narrow(ws: Path, tmp_path: Path) -> None:
    ctx = await indexed(ws, tmp_path)
    assert await call(SYMBOLS, ctx, query="parse", kind="function", path="pkg") == (
        "pkg/parser.py:2: function parse\npkg/util.py:1: function parse_date"
    )
    assert await call(SYMBOLS, ctx, query="parse", path="pkg/parser.py", kind="function") == (
        "pkg/parser.py:2: function parse"
    )
    # A kind is one of the schema's: another is refused before the call runs, and a huge
    # one is never quoted whole (the tool-fuzz campaign found a 65 kB summary).
    with pytest.raises(ValidationError, match="kind"):
        IndexSymbolsParams.model_validate({"query": "parse", "kind": "struct" * 10_000})


async def test_letters_in_order_match_and_the_rest_is_counted(ws: Path, tmp_path: Path) -> None:
    ctx = await indexed(ws, tmp_path)
    out = await call(SYMBOLS, ctx, query="prsArgs", max_results=1)
    assert out == "web/app.ts:2: function parseArgs"
    out = await call(SYMBOLS, ctx, query="p", max_results=2)
    assert out.endswith("more definitions match; narrow with kind or path]")


async def test_unsaved_text_is_read_instead_of_the_disk(ws: Path, tmp_path: Path) -> None:
    buffers = Buffers({ws / "pkg/util.py": "def renamed_in_editor():\n    pass\n"})
    ctx = await indexed(ws, tmp_path, buffers)
    assert await call(SYMBOLS, ctx, query="renamed_in_editor") == (
        "pkg/util.py:1: function renamed_in_editor"
    )
    assert "pkg/util.py" not in await call(SYMBOLS, ctx, query="parse_date")


async def test_a_changed_file_is_defined_again_before_the_next_query(
    ws: Path, tmp_path: Path
) -> None:
    ctx = await indexed(ws, tmp_path)
    write(ws, "pkg/new.go", "package pkg\nfunc FreshlyAdded() {}\n")
    ctx.index.changed([ws / "pkg/new.go"])
    assert await call(SYMBOLS, ctx, query="FreshlyAdded") == "pkg/new.go:2: function FreshlyAdded"


async def test_without_an_index_it_says_what_to_use(ws: Path) -> None:
    with pytest.raises(ToolError, match="search with index-grep"):
        await call(SYMBOLS, context(ws), query="Parser")


async def test_like_wildcards_in_a_query_are_plain_characters(ws: Path, tmp_path: Path) -> None:
    ctx = await indexed(ws, tmp_path)
    assert "no definitions matching" in await call(SYMBOLS, ctx, query="%_\\")


async def test_while_definitions_are_being_taken_it_answers_what_it_has_and_says_so(
    ws: Path, tmp_path: Path
) -> None:
    index = WorkspaceIndex(ws, tmp_path / "index.sqlite3")
    await index.build(define=False)  # searchable; the definitions pass has not run
    index.follow()
    buffers = Buffers({ws / "pkg/util.py": "def edited_here():\n    pass\n"})
    ctx = replace(context(ws, buffers), index=index)
    assert await call(SYMBOLS, ctx, query="edited_here") == (
        "pkg/util.py:1: function edited_here\n"
        "[the index has taken the definitions of 0 of 4 files so far; more may match: "
        "index-grep searches every file]"
    )
    write(ws, "pkg/new.py", "class JustWritten:\n    pass\n")
    index.changed([ws / "pkg/new.py"])  # a changed file is defined before the next query
    assert (await call(SYMBOLS, ctx, query="JustWritten")).startswith(
        "pkg/new.py:1: class JustWritten\n[the index has taken the definitions of 1 of 5"
    )
    assert await call(SYMBOLS, ctx, query="HeaderParser") == (
        "no definitions matching 'HeaderParser' in .; the index has taken the definitions "
        "of 1 of 5 files so far; more may match: index-grep searches every file"
    )
    await index.build()
    assert await call(SYMBOLS, ctx, query="HeaderParser") == "pkg/parser.py:1: class HeaderParser"


@pytest.mark.timeout(10)
async def test_a_file_made_to_be_slow_to_parse_keeps_no_definitions_and_holds_nothing(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """1 MB of "x!" takes tree-sitter's JavaScript parser ~20 s with the GIL held: the
    build's thread would have held the whole server so."""
    monkeypatch.setattr(parsing, "PARSE_BASE_S", 0.1)
    monkeypatch.setattr(parsing, "PARSE_S_PER_BYTE", 0)
    write(ws, "web/slow.js", "function slowButReal() {}\n" + "x!" * 500_000)
    ctx = await indexed(ws, tmp_path)
    assert await call(SYMBOLS, ctx, query="HeaderParser") == "pkg/parser.py:1: class HeaderParser"
    assert (
        await call(SYMBOLS, ctx, query="slowButReal")
        == "no definitions matching 'slowButReal' in ."
    )
    assert "no definitions taken of web/slow.js: its parse took longer than 0.1 s" in caplog.text
    # The same text unsaved in the editor (read live, not from the index) loses only itself.
    buffers = Buffers({ws / "pkg/util.py": "def edited():\n    pass\n" + "x!" * 500_000})
    ctx = replace(ctx, documents=buffers)
    assert await call(SYMBOLS, ctx, query="HeaderParser") == "pkg/parser.py:1: class HeaderParser"
    assert "no definitions taken of pkg/util.py: its parse took longer than 0.1 s" in caplog.text
