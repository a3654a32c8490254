"""``tether doctor``: what this machine gives tether, checked, not assumed: the settings as
the server would read them, the sandbox's probe, the tools it runs."""

from __future__ import annotations

import shutil
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether import __version__
from tether.config import Settings, load_leniently
from tether.mcp_source.workspace import MCP_JSON, WorkspaceServer, allowed, shown, workspace_servers
from tether.store import Store
from tether.tools.ripgrep import find_rg
from tether.tools.sandbox import check


def report(env: Mapping[str, str], options: dict[str, Any] | None, workspace: Path) -> int:
    """Print the checks; 0 when commands will run sandboxed (or the sandbox is off by
    choice), 1 when something needs the person's attention."""
    settings, problems = load_leniently(env, {} if options is None else {"init": options})
    ok = not problems
    lines = [f"tether {__version__} (Python {sys.version.split()[0]}), workspace {workspace}"]
    lines += [f"settings: {problem}" for problem in problems] or ["settings: ok"]
    provider = settings.provider
    model = provider.model or "none: set TETHER_MODEL"
    lines.append(
        f"provider: {provider.kind} at {provider.base_url or 'its default'}, model {model}"
    )
    ok &= provider.model is not None
    lines.append(f"state: {settings.state_dir}")
    found = {"git": shutil.which("git"), "rg": find_rg(), "bwrap": shutil.which("bwrap")}
    lines += [f"{tool}: {path or 'not found'}" for tool, path in found.items()]
    sandbox = check(settings.sandbox)
    mode = settings.sandbox.mode
    if sandbox.used:
        lines.append(f"sandbox: on (sandbox.mode = {mode}); its probe holds")
    else:
        lines.append(f"sandbox: NOT USED (sandbox.mode = {mode}): {sandbox.cause}")
        ok &= mode == "off"
    lines.append(f"commands: approval.commands = {settings.approval.commands}")
    lines += _mcp_servers(settings, workspace.resolve())
    print("\n".join(lines))
    return 0 if ok else 1


def _mcp_servers(settings: Settings, workspace: Path) -> list[str]:
    """Each MCP server tether would start here, as configured (none is started): those of
    the settings, and those of the workspace's ``.mcp.json``, allowed or waiting."""
    listed, problems = workspace_servers(workspace)
    lines = [f"mcp: {problem}" for problem in problems]
    configured = settings.mcp.servers
    lines += [f"mcp server {name} (settings): {shown(s)}" for name, s in configured.items()]
    permitted = _permitted(settings, workspace, listed)
    for name, server in listed.items():
        if name in configured:
            lines.append(f"mcp server {name} ({MCP_JSON}): not used, the settings name it too")
            continue
        state = "allowed" if name in permitted else "WAITS for the person to allow it"
        lines.append(f"mcp server {name} ({MCP_JSON}, {state}): {server.shown}")
    return lines or ["mcp servers: none"]


def _permitted(
    settings: Settings, workspace: Path, listed: Mapping[str, WorkspaceServer]
) -> set[str]:
    """The ``.mcp.json`` servers the person allowed (the store is read, never made)."""
    path = settings.state_dir / "sessions.sqlite3"
    if not listed or not path.exists():
        return set()
    try:
        store = Store(path)
    except (OSError, sqlite3.Error):
        return set()
    try:
        return {n for n, s in listed.items() if allowed(store.rules, str(workspace), s)}
    finally:
        store.close()
