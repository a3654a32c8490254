"""A tether tool call as ACP shows it: its kind, its title, the files it touches, its
status, and its content (text, command output, a file's diff)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TextContentBlock,
    ToolCallLocation,
)

from tether.models import ToolStatus
from tether.tools.base import FileEdit

Kind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
Status = Literal["pending", "in_progress", "completed", "failed"]
Content = ContentToolCallContent | FileEditToolCallContent
KINDS: dict[str, Kind] = {
    "fs-read": "read",
    "outline": "read",
    "git-status": "read",
    "git-diff": "read",
    "git-head": "read",
    "fs-list": "search",
    "fs-find": "search",
    "index-grep": "search",
    "index-symbols": "search",
    "patch": "edit",
    "command": "execute",
}
MAX_SHOWN_CHARS = 64_000  # of a result or a command's output a client is sent (the tail)


def kind(tool: str) -> Kind:
    return KINDS.get(tool, "other")  # an MCP server's tools, among others


def status(result: ToolStatus) -> Status:
    return "completed" if result == "ok" else "failed"


def locations(workspace: Path, arguments: dict[str, Any] | str) -> list[ToolCallLocation] | None:
    """The file a call names (``path``), where the client can follow it: absolute, with the
    first line a read starts at."""
    if not isinstance(arguments, dict) or not isinstance(raw := arguments.get("path"), str):
        return None
    if not raw or "\0" in raw:
        return None
    path = Path(raw).expanduser()
    where = path if path.is_absolute() else workspace / path
    offset = arguments.get("offset")
    line = offset if isinstance(offset, int) and not isinstance(offset, bool) else None
    return [ToolCallLocation(path=str(where), line=line)]


def text(value: str) -> ContentToolCallContent:
    """Text as a call's content: its tail when it is long (a command's last lines matter)."""
    if len(value) > MAX_SHOWN_CHARS:
        value = (
            f"[… {len(value) - MAX_SHOWN_CHARS:,} characters before]\n{value[-MAX_SHOWN_CHARS:]}"
        )
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=value))


def diff(edit: FileEdit) -> FileEditToolCallContent:
    return FileEditToolCallContent(
        type="diff", path=str(edit.path), old_text=edit.before, new_text=edit.after
    )


def title(tool: str, arguments: dict[str, Any] | str) -> str:
    """A stored call's title, where no summary was kept: its tool and what it names."""
    if isinstance(arguments, dict):
        for key in ("path", "command", "pattern", "query"):
            if isinstance(value := arguments.get(key), str):
                return f"{tool} {value[:200]}"
    return tool
