"""``tether doctor``: what this machine gives tether, checked, not assumed: the settings as
the server would read them, the sandbox's probe, the tools it runs, and each MCP server it
would start, started for a moment (its state and its tools). A ``.mcp.json`` server the
person has not allowed is named, never started."""

from __future__ import annotations

import asyncio
import logging
import shutil
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether import __version__
from tether.config import McpServerSettings, Settings, load_leniently
from tether.mcp_source.servers import SETTLING, McpServers, ServerState
from tether.mcp_source.workspace import MCP_JSON, WorkspaceServer, allowed, shown, workspace_servers
from tether.store import Store
from tether.tools.ripgrep import find_rg
from tether.tools.sandbox import check
from tether.tools.toolbox import Toolbox

PROBE_S = 10.0  # how long MCP servers have to start and list their tools (editors wait 15 s)


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
    mcp_lines, mcp_ok = _mcp_servers(settings, workspace.resolve())
    lines += mcp_lines
    ok &= mcp_ok
    print("\n".join(lines))
    return 0 if ok else 1


def _mcp_servers(settings: Settings, workspace: Path) -> tuple[list[str], bool]:
    """Each MCP server tether would start here: those of the settings and the allowed ones
    of the workspace's ``.mcp.json``, started for a moment; and those that wait to be
    allowed. False when one of them failed."""
    listed, problems = workspace_servers(workspace)
    lines = [f"mcp: {problem}" for problem in problems]
    configured = settings.mcp.servers
    permitted = _permitted(settings, workspace, listed)
    started: dict[str, McpServerSettings] = dict(configured)
    started |= {n: s.settings for n, s in listed.items() if n in permitted and n not in configured}
    states = asyncio.run(_probed(started)) if started else {}
    lines += [
        f"mcp server {name} (settings): {shown(s)}: {_said(states[name])}"
        for name, s in configured.items()
    ]
    for name, server in listed.items():
        if name in configured:
            lines.append(f"mcp server {name} ({MCP_JSON}): not used, the settings name it too")
        elif name in permitted:
            said = _said(states[name])
            lines.append(f"mcp server {name} ({MCP_JSON}, allowed): {server.shown}: {said}")
        else:
            state = "WAITS for the person to allow it"
            lines.append(f"mcp server {name} ({MCP_JSON}, {state}): {server.shown}")
    ok = all(state.state == "running" for state in states.values())
    return lines or ["mcp servers: none"], ok


async def _probed(servers: Mapping[str, McpServerSettings]) -> dict[str, ServerState]:
    """Start the servers, wait until each runs or failed (or ``PROBE_S``), stop them."""
    logging.getLogger("tether").addHandler(logging.NullHandler())  # said below, not logged
    running = McpServers(servers, Toolbox())
    running.start()
    try:
        async with asyncio.timeout(PROBE_S):
            await running.settled()
    except TimeoutError:
        pass
    states = dict(running.states)
    await running.close()
    return states


def _said(state: ServerState) -> str:
    if state.state in SETTLING:
        return f"NO ANSWER within {PROBE_S:g} s ({state})"
    return str(state) if state.state == "running" else f"FAILED: {state.detail or state}"


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
