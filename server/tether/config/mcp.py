"""The ``mcp`` section: the MCP servers tether starts, by name, each a command (stdio) or
a URL (streamable HTTP)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StringConstraints

from tether.config.sections import Section


class McpServer(BaseModel):
    """What every MCP server entry may say: whether its read-only hints are believed, which
    of its tools are offered, and how long one call may take."""

    model_config = ConfigDict(extra="forbid")
    trusted: bool = False  # only then does a tool's `readOnlyHint: true` skip the dialog
    enabled_tools: list[str] | None = None  # None: every tool it lists
    disabled_tools: list[str] = Field(default_factory=list)
    timeout_s: float = Field(default=60.0, gt=0)

    def offers(self, tool: str) -> bool:
        listed = self.enabled_tools is None or tool in self.enabled_tools
        return listed and tool not in self.disabled_tools


def _no_list_for_a_map(value: Any) -> Any:
    """An empty Lua table reaches us as ``[]``: Neovim cannot tell an empty map from a list."""
    return {} if value == [] else value


StringMap = Annotated[dict[str, str], BeforeValidator(_no_list_for_a_map)]


class McpStdioServer(McpServer):
    command: str = Field(min_length=1)
    args: list[str] = Field(default_factory=list)
    env: StringMap = Field(default_factory=dict)
    cwd: str | None = None


class McpHttpServer(McpServer):
    url: str = Field(min_length=1)
    headers: StringMap = Field(default_factory=dict)


McpServerSettings = McpStdioServer | McpHttpServer


class McpSettings(Section):
    # A server's name is part of its tools' names (`mcp__NAME__TOOL`): letters, digits, - _.
    servers: dict[
        Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,32}$")],
        McpServerSettings,
    ] = Field(default_factory=dict)
