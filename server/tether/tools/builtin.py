"""The built-in tools, one of each, in the contract's order."""

from __future__ import annotations

from typing import Any

from tether.tools.base import Tool
from tether.tools.command import Command
from tether.tools.fs_find import FsFind
from tether.tools.fs_list import FsList
from tether.tools.fs_read import FsRead
from tether.tools.git import GitDiff, GitHead, GitStatus
from tether.tools.index_grep import IndexGrep
from tether.tools.index_symbols import IndexSymbols
from tether.tools.outline import Outline
from tether.tools.patch import Patch


def builtin_tools() -> list[Tool[Any]]:
    """One of each tool, in the contract's order: the read-only ones, then command and patch."""
    return [
        FsRead(),
        FsList(),
        FsFind(),
        IndexGrep(),
        IndexSymbols(),
        Outline(),
        GitStatus(),
        GitDiff(),
        GitHead(),
        Command(),
        Patch(),
    ]
