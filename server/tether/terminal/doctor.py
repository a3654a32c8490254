"""``tether doctor``: what this machine gives tether, checked, not assumed: the settings as
the server would read them, the sandbox's probe, the tools it runs."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tether import __version__
from tether.config import load_leniently
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
    print("\n".join(lines))
    return 0 if ok else 1
