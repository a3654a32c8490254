"""``outline``: a source file's classes, functions and methods, with their lines, by tree-sitter."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from tree_sitter import Language, Node, Tree

from tether.errors import ToolError
from tether.tools.base import ToolContext
from tether.tools.parsing import TooSlow
from tether.tools.paths import checked, named, reads_inside, shown
from tether.tools.syntax_trees import RecentTrees
from tether.tools.text import ON_LOOP_BYTES, load_text

# extension -> (grammar module, its language function, the node table below)
_GRAMMARS = {
    ".py": ("tree_sitter_python", "language", "python"),
    ".pyi": ("tree_sitter_python", "language", "python"),
    ".js": ("tree_sitter_javascript", "language", "javascript"),
    ".mjs": ("tree_sitter_javascript", "language", "javascript"),
    ".cjs": ("tree_sitter_javascript", "language", "javascript"),
    ".jsx": ("tree_sitter_javascript", "language", "javascript"),
    ".ts": ("tree_sitter_typescript", "language_typescript", "typescript"),
    ".tsx": ("tree_sitter_typescript", "language_tsx", "typescript"),
    ".go": ("tree_sitter_go", "language", "go"),
    ".rs": ("tree_sitter_rust", "language", "rust"),
}

Label = Callable[[Node], "str | None"]


def _text(node: Node | None) -> str:
    return node.text.decode(errors="replace") if node is not None and node.text else "?"


def _named(keyword: str) -> Label:
    return lambda node: f"{keyword} {_text(node.child_by_field_name('name'))}"


def _python_def(node: Node) -> str:
    keyword = "async def" if any(c.type == "async" for c in node.children) else "def"
    return f"{keyword} {_text(node.child_by_field_name('name'))}"


def _js_method(node: Node) -> str:
    mods = [c.type for c in node.children if c.type in ("static", "async", "get", "set")]
    kind = " ".join(mods) if {"get", "set"} & set(mods) else " ".join([*mods, "method"])
    return f"{kind} {_text(node.child_by_field_name('name'))}"


def _js_bound_function(node: Node) -> str | None:
    """``const f = () => ...``, ``handler = function () {...}``: a function by another name."""
    value = node.child_by_field_name("value")
    functions = ("arrow_function", "function_expression", "function", "generator_function")
    if value is None or value.type not in functions:
        return None
    name = node.child_by_field_name("name") or node.child_by_field_name("property")
    return f"{'method' if node.type == 'field_definition' else 'function'} {_text(name)}"


def _go_method(node: Node) -> str:
    receiver = _text(node.child_by_field_name("receiver"))
    return f"func {receiver} {_text(node.child_by_field_name('name'))}"


def _go_type(node: Node) -> str:
    kind = node.child_by_field_name("type")
    suffix = {"struct_type": " struct", "interface_type": " interface"}.get(
        kind.type if kind else ""
    )
    return f"type {_text(node.child_by_field_name('name'))}{suffix or ''}"


def _rust_impl(node: Node) -> str:
    trait = node.child_by_field_name("trait")
    target = _text(node.child_by_field_name("type"))
    return f"impl {_text(trait)} for {target}" if trait else f"impl {target}"


@dataclass(frozen=True)
class _Kind:
    label: Label
    container: bool = False  # its members are listed beneath it


_JS: dict[str, _Kind] = {
    "class_declaration": _Kind(_named("class"), container=True),
    "function_declaration": _Kind(_named("function")),
    "generator_function_declaration": _Kind(_named("function*")),
    "method_definition": _Kind(_js_method),
    "variable_declarator": _Kind(_js_bound_function),
    "field_definition": _Kind(_js_bound_function),
}
_TABLES: dict[str, dict[str, _Kind]] = {
    "python": {
        "class_definition": _Kind(_named("class"), container=True),
        "function_definition": _Kind(_python_def),
    },
    "javascript": _JS,
    "typescript": {
        **_JS,
        "abstract_class_declaration": _Kind(_named("abstract class"), container=True),
        "interface_declaration": _Kind(_named("interface")),
        "type_alias_declaration": _Kind(_named("type")),
        "enum_declaration": _Kind(_named("enum")),
        "internal_module": _Kind(_named("namespace"), container=True),
        "module": _Kind(_named("module"), container=True),
        "abstract_method_signature": _Kind(_named("abstract method")),
        "function_signature": _Kind(_named("function")),
    },
    "go": {
        "function_declaration": _Kind(_named("func")),
        "method_declaration": _Kind(_go_method),
        "type_spec": _Kind(_go_type),
        "type_alias": _Kind(_named("type")),
    },
    "rust": {
        "function_item": _Kind(_named("fn")),
        "function_signature_item": _Kind(_named("fn")),
        "struct_item": _Kind(_named("struct")),
        "enum_item": _Kind(_named("enum")),
        "union_item": _Kind(_named("union")),
        "type_item": _Kind(_named("type")),
        "trait_item": _Kind(_named("trait"), container=True),
        "impl_item": _Kind(_rust_impl, container=True),
        "mod_item": _Kind(_named("mod"), container=True),
        "macro_definition": _Kind(_named("macro_rules!")),
    },
}
# Function bodies and values are not searched: their insides are not the file's outline.
_OPAQUE = {"lambda", "arrow_function", "function_expression", "function", "generator_function"}
# A wrapper's first line (decorators, "export", "const") is where its definition starts.
_WRAPPERS = {"decorated_definition", "export_statement", "lexical_declaration"}
_WRAPPERS |= {"variable_declaration", "type_declaration"}


@cache
def _language(module: str, function: str) -> Language:
    # Imported on first use: a grammar costs start-up time most sessions never need.
    return Language(getattr(importlib.import_module(module), function)())


def grammar_of(suffix: str) -> tuple[Language, str, str] | None:
    """The language of files ending in ``suffix``, with its grammar's module and language
    function (the workspace index takes definitions with the same grammars)."""
    grammar = _GRAMMARS.get(suffix.lower())
    if grammar is None:
        return None
    module, function, _ = grammar
    return _language(module, function), module, function


def grammar_of_module(module: str, function: str) -> Language:
    return _language(module, function)


class OutlineParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="The source file, relative to the workspace root.")


class Outline:
    name = "outline"
    reads = True  # its calls only read (one outside the workspace still asks)
    description = (
        "Outline a source file: its classes, functions and methods (and structs, enums, "
        "traits, impls, interfaces, types) with their 1-based line ranges, members indented "
        "under their class, one per line as 'class Foo  (lines 3-20)'. Reads the editor's "
        "unsaved text. Supports " + ", ".join(_GRAMMARS) + ". Use it to find what to fs-read."
    )
    params = OutlineParams

    def read_only(self, params: OutlineParams, ctx: ToolContext) -> bool:
        return reads_inside(ctx, params.path)

    def summary(self, params: OutlineParams, ctx: ToolContext) -> str:
        return f"outline {shown(ctx, params.path)}"

    async def run(self, params: OutlineParams, ctx: ToolContext) -> str:
        path = checked(ctx, params.path)
        name = named(ctx, path)
        grammar = _GRAMMARS.get(path.suffix.lower())
        if grammar is None:
            supported = ", ".join(_GRAMMARS)
            raise ToolError(f"outline does not know {name}'s language; it reads {supported}")
        text = await load_text(ctx, path)
        lines = None
        if len(text) <= ON_LOOP_BYTES:  # outlined before, as it is: told on the loop
            lines = _RECENT.known(_key(path, grammar), text.encode(errors="surrogatepass"))
        if lines is None:
            try:
                lines = await asyncio.to_thread(_outline, text, grammar, path)
            except TooSlow as slow:
                raise ToolError(f"outline gave up on {name}: {slow}; fs-read it instead") from None
        if not lines:
            return f"{name} defines no functions or classes"
        out = "\n".join(lines)
        budget = ctx.settings.max_read_bytes
        if len(out) > budget:
            out = out[: out.rfind("\n", 0, budget)] + "\n[outline cut; fs-read the file in parts]"
        return out


_RECENT = RecentTrees()


def _outline(text: str, grammar: tuple[str, str, str], path: Path) -> list[str]:
    module, function, table = grammar
    data = text.encode(errors="surrogatepass")
    return _RECENT.lines(
        _key(path, grammar), _language(module, function), data, partial(_lines, table)
    )


def _key(path: Path, grammar: tuple[str, str, str]) -> tuple[Path, str, str]:
    module, function, _ = grammar
    return path, module, function


def _lines(table: str, tree: Tree) -> list[str]:
    lines = _visited(tree.root_node, _TABLES[table])
    if lines and tree.root_node.has_error:
        lines.append("[the file has syntax errors; the outline may be incomplete]")
    return lines


def _visited(root: Node, table: dict[str, _Kind]) -> list[str]:
    """The outline's lines, in the order of the text. A stack of the nodes being walked,
    not a recursion: a file 20,000 parentheses deep is valid Python (the parse-fuzz
    campaign found outline failing on it with RecursionError)."""
    out: list[str] = []
    # Each level: the children left to walk, their outline depth, and the first line of
    # the wrapper they are in (a decorated definition starts at its decorator), if any.
    stack: list[tuple[Iterator[Node], int, int | None]] = [(iter(root.named_children), 0, None)]
    while stack:
        children, depth, start = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            continue
        first = child.start_point.row if start is None else start
        kind = table.get(child.type)
        label = kind.label(child) if kind else None
        if kind is None or label is None:
            if child.type not in _OPAQUE:
                wrapped = first if child.type in _WRAPPERS else None
                stack.append((iter(child.named_children), depth, wrapped))
            continue
        last = child.end_point.row - (child.end_point.column == 0 and child.end_point.row > first)
        span = f"line {first + 1}" if last == first else f"lines {first + 1}-{last + 1}"
        out.append(f"{'  ' * depth}{label}  ({span})")
        if kind.container:
            stack.append((iter(child.named_children), depth + 1, None))
    return out
