"""A workspace's ``.mcp.json`` (``{"mcpServers": {NAME: {...}}}``, the file other agents
read): its servers, each started only once the person allowed that exact entry.

Opening a repository must never start a program. So an entry is allowed by a dialog that
names its command line, and the allowance is remembered for the workspace as a rule
(tool ``mcp-server``) keyed by the server's name and a hash of the entry as written: a
changed entry is another entry, and asks again. The rule is listed and removed like any
other (``tether.rules``, ``tether.forget``).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pydantic import TypeAdapter, ValidationError

from tether.config import McpHttpServer, McpStdioServer
from tether.store.rules import RuleBook

MCP_JSON = ".mcp.json"
PERMIT_TOOL = "mcp-server"  # the rules store's tool for "this entry may start"
_ENTRY = TypeAdapter(McpStdioServer | McpHttpServer)


@dataclass(frozen=True)
class WorkspaceServer:
    name: str
    settings: McpStdioServer | McpHttpServer
    digest: str  # of the entry as written: a changed entry asks again

    @property
    def key(self) -> str:
        return f"{self.name}@{self.digest[:16]}"

    @property
    def shown(self) -> str:
        """What the person is asked to allow: the command line, or the address."""
        return shown(self.settings)


def shown(settings: McpStdioServer | McpHttpServer) -> str:
    """A server as a person reads it: its command line (where it runs), or its address."""
    if isinstance(settings, McpHttpServer):
        return settings.url
    line = shlex.join([settings.command, *settings.args])
    if settings.env:
        line = shlex.join(f"{k}={v}" for k, v in settings.env.items()) + " " + line
    return line if settings.cwd is None else f"{line} (in {settings.cwd})"


def workspace_servers(workspace: Path) -> tuple[dict[str, WorkspaceServer], list[str]]:
    """The servers the workspace's ``.mcp.json`` names, and what is wrong with it."""
    path = workspace / MCP_JSON
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return {}, [f"{MCP_JSON}: {exc}"]
    entries = raw.get("mcpServers") if isinstance(raw, dict) else None
    if not isinstance(entries, dict):
        return {}, [f'{MCP_JSON}: no "mcpServers" object']
    servers: dict[str, WorkspaceServer] = {}
    problems: list[str] = []
    for name, entry in entries.items():
        try:
            servers[name] = _server(workspace, name, entry)
        except ValueError as exc:
            problems.append(f"{MCP_JSON}: server {name!r}: {exc}")
    return servers, problems


def _server(workspace: Path, name: str, entry: Any) -> WorkspaceServer:
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", name):
        raise ValueError("a name is 1 to 32 letters, digits, - and _")
    if not isinstance(entry, dict):
        raise ValueError("not an object")
    digest = hashlib.sha256(
        json.dumps([name, entry], sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    given = dict(entry)
    kind = given.pop("type", None)
    if kind not in (None, "stdio", "http", "streamable-http", "streamableHttp"):
        raise ValueError(f"type {kind!r} is not served (stdio and streamable HTTP are)")
    if "command" in given:
        # A server of the workspace runs in the workspace, as other agents run it.
        cwd = given.get("cwd")
        given["cwd"] = str(workspace / cwd) if isinstance(cwd, str) else str(workspace)
    try:
        settings = _ENTRY.validate_python(given)
    except ValidationError as exc:
        raise ValueError(_first(exc)) from None
    return WorkspaceServer(name=name, settings=settings, digest=digest)


def _first(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"][1:])
    return f"{where}: {error['msg']}" if where else error["msg"]


def allowed(rules: RuleBook, workspace: str, server: WorkspaceServer) -> bool:
    """Whether the person allowed this very entry in this workspace."""
    rule = rules.match("", workspace, PERMIT_TOOL, server.key)
    return rule is not None and rule.verdict == "allow"


class Asker(Protocol):
    """The person, asked whether a workspace's server may start."""

    async def allow_server(self, name: str, shown: str) -> bool: ...


class Permits:
    """Which of a workspace's servers the person allowed, and asking them."""

    def __init__(self, rules: RuleBook, workspace: str, asker: Asker) -> None:
        self.rules = rules
        self.workspace = workspace
        self.asker = asker

    def allowed(self, server: WorkspaceServer) -> bool:
        return allowed(self.rules, self.workspace, server)

    async def ask(self, server: WorkspaceServer) -> bool:
        """Ask the person; an allowance is remembered for this workspace and this entry."""
        if not await self.asker.allow_server(server.name, server.shown):
            return False
        words = f"start the MCP server {server.name} of {MCP_JSON}: {server.shown}"
        self.rules.add("workspace", self.workspace, PERMIT_TOOL, server.key, words)
        return True
