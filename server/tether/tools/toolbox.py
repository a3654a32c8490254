"""The tools in force, by name: the built-in ones from the start, and those a second source
(an MCP server) adds when it has listed them. One toolbox is shared by the service and
the dispatcher, so a tool added is offered and run from the next turn on."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from tether.tools.base import Tool


class Toolbox(Mapping[str, Tool[Any]]):
    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._tools = {tool.name: tool for tool in tools}
        self._sources: dict[str, str] = {}  # a tool's source, where it is not built in
        self.version = 0  # grows with every change: what the model is told is rebuilt

    def add(self, tools: Iterable[Tool[Any]], source: str = "builtin") -> None:
        """Add tools from ``source`` (``mcp:NAME``); a name already taken keeps its first
        tool (a built-in always wins)."""
        for tool in tools:
            if tool.name not in self._tools:
                self._tools[tool.name] = tool
                self._sources[tool.name] = source
        self.version += 1

    def remove(self, names: Iterable[str]) -> None:
        removed = [self._tools.pop(name, None) for name in names]
        self._sources = {n: s for n, s in self._sources.items() if n in self._tools}
        if any(tool is not None for tool in removed):
            self.version += 1

    def source(self, name: str) -> str:
        """Where a tool comes from: ``builtin``, or ``mcp:NAME`` for an MCP server's."""
        return self._sources.get(name, "builtin")

    def __getitem__(self, name: str) -> Tool[Any]:
        return self._tools[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)


def toolbox(tools: Iterable[Tool[Any]] | Toolbox) -> Toolbox:
    """The toolbox given, or a new one of the tools given."""
    return tools if isinstance(tools, Toolbox) else Toolbox(tools)
