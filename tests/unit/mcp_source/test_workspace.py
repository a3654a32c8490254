"""A workspace's ``.mcp.json``: its entries read, and each allowed once per entry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tether.config import McpHttpServer, McpStdioServer
from tether.mcp_source.workspace import Permits, workspace_servers
from tether.store import Store


def written(tmp_path: Path, servers: Any) -> Path:
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return tmp_path


def test_entries_are_read_in_the_shape_other_agents_write_them(tmp_path: Path) -> None:
    servers, problems = workspace_servers(
        written(
            tmp_path,
            {
                "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"]},
                "web": {"type": "http", "url": "https://example.com/mcp"},
                "old": {"type": "sse", "url": "https://example.com/sse"},
                "bad name!": {"command": "x"},
                "odd": {"command": "x", "colour": "red"},
            },
        )
    )
    assert sorted(servers) == ["git", "web"]
    git = servers["git"].settings
    assert isinstance(git, McpStdioServer) and git.cwd == str(tmp_path)  # runs in the workspace
    assert servers["git"].shown == f"uvx mcp-server-git (in {tmp_path})"
    assert isinstance(servers["web"].settings, McpHttpServer)
    assert len(problems) == 3 and all(p.startswith(".mcp.json: server ") for p in problems)


def test_no_file_is_no_servers_and_a_broken_one_is_a_problem(tmp_path: Path) -> None:
    assert workspace_servers(tmp_path) == ({}, [])
    (tmp_path / ".mcp.json").write_text("{not json")
    servers, problems = workspace_servers(tmp_path)
    assert servers == {} and problems[0].startswith(".mcp.json: ")


class Answering:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[tuple[str, str]] = []

    async def allow_server(self, name: str, shown: str) -> bool:
        self.asked.append((name, shown))
        return self.answer


async def test_an_allowed_entry_is_remembered_and_a_changed_one_is_not(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    first = workspace_servers(written(tmp_path, {"git": {"command": "uvx"}}))[0]["git"]
    changed = workspace_servers(written(tmp_path, {"git": {"command": "sh"}}))[0]["git"]
    assert first.key != changed.key

    refused = Permits(store.rules, "/ws", Answering(False))
    assert not await refused.ask(first) and not refused.allowed(first)
    person = Answering(True)
    permits = Permits(store.rules, "/ws", person)
    assert await permits.ask(first)
    assert permits.allowed(first) and not permits.allowed(changed)
    assert not Permits(store.rules, "/other", person).allowed(first)  # per workspace
    assert person.asked == [("git", f"uvx (in {tmp_path})")]
    (rule,) = store.rules.of_workspace("/ws")
    assert rule.tool == "mcp-server" and "git" in rule.words and "uvx" in rule.words


async def test_a_rule_that_denies_never_lets_an_entry_start(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.sqlite3")
    entry = workspace_servers(written(tmp_path, {"git": {"command": "uvx"}}))[0]["git"]
    store.rules.add("workspace", "/ws", "mcp-server", entry.key, "git", "deny")
    assert not Permits(store.rules, "/ws", Answering(True)).allowed(entry)
