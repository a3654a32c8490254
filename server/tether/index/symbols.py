"""A file's definitions, by the tree-sitter tag queries its grammar ships (``tags.scm``).

The grammars are the ones ``outline`` parses with; the queries are their own, so what
counts as a definition is what tree-sitter's tagging says: each ``@definition.KIND``
with its ``@name``. TypeScript's tags add to JavaScript's. References are not kept.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from tree_sitter import Node, Query, QueryCursor

from tether.outbound import escape_surrogates
from tether.tools.outline import grammar_of, grammar_of_module
from tether.tools.parsing import TooSlow, parse

log = logging.getLogger(__name__)

MAX_NAME = 200  # a longer "name" is a parse gone wrong: not kept
# Matches start no deeper than this. A tag query's time grows with the square of the
# nesting it walks: a Rust file of 8,000 nested `mod m {` took 1.8 s, and a hostile one of
# 2 MiB would hold the server for hours; no definition a person looks for is this deep.
MAX_START_DEPTH = 256
# grammar module -> the modules whose TAGS_QUERY (or queries/tags.scm) apply, in order
_QUERIES = {
    "tree_sitter_python": ("tree_sitter_python",),
    "tree_sitter_javascript": ("tree_sitter_javascript",),
    "tree_sitter_typescript": ("tree_sitter_javascript", "tree_sitter_typescript"),
    "tree_sitter_go": ("tree_sitter_go",),
    "tree_sitter_rust": ("tree_sitter_rust",),
}


@dataclass(frozen=True)
class Definition:
    name: str
    kind: str  # class, function, method, constant, type, interface, module, macro...
    line: int  # 1-based


def supported(name: str) -> bool:
    """Whether a file of this name has a grammar and a tag query."""
    return grammar_of(os.path.splitext(name)[1]) is not None


def definitions(text: str, suffix: str) -> list[Definition]:
    """The definitions in ``text``, a file ending in ``suffix``; none for another language.
    ``parsing.TooSlow`` for a text whose parse ran past its budget."""
    grammar = grammar_of(suffix)
    if grammar is None:
        return []
    language, module, function = grammar
    query = _query(module, function)
    data = text.encode(errors="surrogatepass")
    tree = parse(language, data)
    found: list[Definition] = []
    seen: set[tuple[str, int]] = set()
    for node in _whole(tree.root_node):
        # No deadline of its own: py-tree-sitter 0.26.1's ``progress_callback`` for a query
        # keeps a pointer to options on its stack that the first match overwrites, and the
        # next check calls through it (a segfault: one function, then 2,000 statements).
        cursor = QueryCursor(query)
        cursor.set_max_start_depth(MAX_START_DEPTH)
        for _, captures in cursor.matches(node):
            kinds = [
                key.removeprefix("definition.") for key in captures if key.startswith("definition.")
            ]
            names = captures.get("name")
            if not kinds or not names:
                continue
            name = data[names[0].start_byte : names[0].end_byte].decode(errors="replace")
            line = names[0].start_point.row + 1
            if 0 < len(name) <= MAX_NAME and "\n" not in name and (name, line) not in seen:
                seen.add((name, line))  # one definition matched twice (a Rust method) once
                found.append(Definition(name, kinds[0], line))
    return found


def taken(rel: bytes, text: str) -> list[Definition]:
    """The definitions of the file ``rel`` (workspace-relative) holding ``text``; none, and
    a line in the log, for a text made to be slow to parse."""
    try:
        return definitions(text, os.path.splitext(os.fsdecode(rel))[1])
    except TooSlow as slow:
        log.warning("no definitions taken of %s: %s", escape_surrogates(os.fsdecode(rel)), slow)
        return []


def _whole(root: Node) -> Iterator[Node]:
    """The largest subtrees of ``root`` without a syntax error, in order: the tag query
    walks only these. Inside an error, tree-sitter's recovery can nest what it could not
    place thousands deep out of sight (500,000 unclosed "[" took the query 280 s, the
    parse 0.1); the nodes on the way to an error are not themselves matched, so a class
    with a broken line keeps its methods but not its own name."""
    stack = [(root, 0)]
    while stack:
        node, depth = stack.pop()
        if not node.has_error:
            yield node
        elif depth < MAX_START_DEPTH:  # a token alone defines nothing
            stack += [(child, depth + 1) for child in reversed(node.children) if child.child_count]


@cache
def _query(module: str, function: str) -> Query:
    """The grammar's tag query, its patterns without a definition turned off: references
    were three in four of a Python file's matches, all dropped (6% of the time to take a
    file's definitions; the parse is two thirds of it)."""
    grammar = grammar_of_module(module, function)
    source = "\n".join(_tags(name) for name in _QUERIES[module])
    query = Query(grammar, source)
    encoded = source.encode()
    for pattern in range(query.pattern_count):
        text = encoded[query.start_byte_for_pattern(pattern) : query.end_byte_for_pattern(pattern)]
        if b"@definition." not in text:
            query.disable_pattern(pattern)
    return query


def _tags(module: str) -> str:
    imported = importlib.import_module(module)
    query = getattr(imported, "TAGS_QUERY", None)
    if isinstance(query, str):
        return query
    path = os.path.join(os.path.dirname(imported.__file__ or ""), "queries", "tags.scm")
    with open(path, encoding="utf-8") as file:
        return file.read()


def like(query: str) -> str:
    """A LIKE pattern (escaped with backslash) that holds ``query`` as a subsequence."""
    escaped = [("\\" + char) if char in "%_\\" else char for char in query]
    return "%" + "%".join(escaped) + "%"


def rank(query: str, name: str) -> tuple[int, int, str] | None:
    """How well ``name`` matches ``query`` (lower sorts first): the exact name, then one in
    another case, a prefix, a substring, the letters in order; shorter names first. None:
    no match."""
    folded, wanted = name.lower(), query.lower()
    if name == query:
        tier = 0
    elif folded == wanted:
        tier = 1
    elif folded.startswith(wanted):
        tier = 2
    elif wanted in folded:
        tier = 3
    elif _in_order(wanted, folded):
        tier = 4
    else:
        return None
    return tier, len(name), name


def _in_order(wanted: str, folded: str) -> bool:
    letters = iter(folded)
    return all(char in letters for char in wanted)
