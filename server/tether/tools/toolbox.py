"""The tools in force, by name: the built-in ones from the start, and those a second source
(an MCP server) adds when it has listed them. One toolbox is shared by the service and
the dispatcher, so a tool added is offered and run from the next turn on.

A source may belong to one session (the MCP servers an ACP client named for it): its
tools are in that session's ``view`` only, so two sessions may each run a server of one
name, and each sees its own. The toolbox itself is what every session has: the built-in
tools and those of the workspace's servers (settings, ``.mcp.json``); where a session's
own tool and one of these share a name, the workspace's wins in the view.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from tether.tools.base import Tool

BUILTIN = "builtin"

_Named = dict[str, tuple[Tool[Any], str]]  # a tool's name -> the tool and its source
_NONE: _Named = {}


class Toolbox(Mapping[str, Tool[Any]]):
    def __init__(self, tools: Iterable[Tool[Any]] = ()) -> None:
        self._shared: _Named = {tool.name: (tool, BUILTIN) for tool in tools}
        self._own: dict[str, _Named] = {}  # a session's own tools, by session
        self.version = 0  # grows with every change: what the model is told is rebuilt

    def add(
        self, tools: Iterable[Tool[Any]], source: str = BUILTIN, session: str | None = None
    ) -> None:
        """Add tools from ``source`` (``mcp:NAME``), for every session or (``session``) for
        that one only; a name already taken there keeps its first tool (a built-in always
        wins)."""
        named = self._shared if session is None else self._own.setdefault(session, {})
        for tool in tools:
            named.setdefault(tool.name, (tool, source))
        self.version += 1

    def remove(self, source: str, session: str | None = None) -> None:
        """Remove the tools ``source`` added (for ``session``): never another source's
        tool of the same name, which kept its name."""
        named = self._shared if session is None else self._own.get(session, {})
        gone = [name for name, (_, s) in named.items() if s == source]
        for name in gone:
            del named[name]
        if session is not None and not named:
            self._own.pop(session, None)
        if gone:
            self.version += 1

    def source(self, name: str) -> str:
        """Where a tool comes from: ``builtin``, or ``mcp:NAME`` for an MCP server's."""
        return self._shared[name][1] if name in self._shared else BUILTIN

    def view(self, session: str | None) -> ToolView:
        """The tools ``session`` has: every session's and its own (None: every session's)."""
        return ToolView(self, session)

    def __getitem__(self, name: str) -> Tool[Any]:
        return self._shared[name][0]

    def __iter__(self) -> Iterator[str]:
        return iter(self._shared)

    def __len__(self) -> int:
        return len(self._shared)


class ToolView(Mapping[str, Tool[Any]]):
    """One session's tools, read live from the toolbox (a server that stops leaves it at
    once). Views of one ``owner`` hold the same tools: the session, when it has tools of
    its own, else None."""

    def __init__(self, box: Toolbox, session: str | None) -> None:
        self._box = box
        self._shared = box._shared
        self._session = session

    @property
    def _own(self) -> _Named:
        return self._box._own.get(self._session, _NONE) if self._session is not None else _NONE

    @property
    def owner(self) -> str | None:
        return self._session if self._own else None

    @property
    def version(self) -> int:
        return self._box.version

    def source(self, name: str) -> str:
        if name in self._shared:
            return self._shared[name][1]
        return self._own[name][1] if name in self._own else BUILTIN

    def __getitem__(self, name: str) -> Tool[Any]:
        if name in self._shared:
            return self._shared[name][0]
        return self._own[name][0]

    def __iter__(self) -> Iterator[str]:
        yield from self._shared
        yield from (name for name in self._own if name not in self._shared)

    def __len__(self) -> int:
        return len(self._shared) + sum(name not in self._shared for name in self._own)


def toolbox(tools: Iterable[Tool[Any]] | Toolbox) -> Toolbox:
    """The toolbox given, or a new one of the tools given."""
    return tools if isinstance(tools, Toolbox) else Toolbox(tools)
