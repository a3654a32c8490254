"""The answer to a query for definitions: those the index holds and those in the open
documents (their live text parsed instead of the disk's), ranked (``symbols.rank``)."""

from __future__ import annotations

from pathlib import Path

from tether.index.reading import absolute, relative
from tether.index.symbols import rank, supported, taken
from tether.tools.index_view import SymbolHit

Row = tuple[bytes, str, str, int]  # as ``Database.symbols`` gives them: path, name, kind, line


def ranked(
    query: str,
    kind: str | None,
    root: Path,
    under: Path,
    rows: list[Row],
    live: dict[Path, str],
) -> list[SymbolHit]:
    """The definitions in ``rows`` (the index's, of files under ``under``) and in the open
    documents under ``under`` that match ``query``, best first; an open document's are
    taken from its live text, never from the index."""
    hits = [
        SymbolHit(path, line, found_kind, name)
        for rel, name, found_kind, line in rows
        if (path := absolute(root, rel)) not in live
    ]
    for path, text in live.items():
        if path.is_relative_to(under) and supported(path.name):
            for found in taken(relative(root, path), text):
                if kind is None or found.kind == kind:
                    hits.append(SymbolHit(path, found.line, found.kind, found.name))
    scored = [(score, hit) for hit in hits if (score := rank(query, hit.name)) is not None]
    scored.sort(key=lambda pair: (pair[0], str(pair[1].path), pair[1].line))
    return [hit for _, hit in scored]
