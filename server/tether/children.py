"""How the serving process waits for the programs it starts (ripgrep, git, commands, MCP
servers): on Linux with Python 3.11, through a pidfd in the event loop instead of
asyncio's default, a thread blocked in ``waitpid`` for each program. Eight reads in one
reply start some ten programs; their threads cost the batch about a tenth of its CPU.
Python 3.12 and newer do this by themselves; elsewhere the default stays. Called where a
serving process starts its one loop (a watcher belongs to one loop)."""

from __future__ import annotations

import asyncio
import os
import sys
import warnings


def reap_without_threads() -> None:
    """Use a pidfd child watcher from now on, where Python and the kernel allow it (in a
    running loop; the programs started before are still waited for as they were)."""
    if sys.platform != "linux" or sys.version_info >= (3, 12):
        return
    try:
        loop = asyncio.get_running_loop()
        os.close(os.pidfd_open(os.getpid()))  # Linux 5.3+, and no seccomp filter against it
    except (RuntimeError, OSError):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if isinstance(asyncio.get_child_watcher(), asyncio.PidfdChildWatcher):
            return
        watcher = asyncio.PidfdChildWatcher()
        watcher.attach_loop(loop)
        asyncio.set_child_watcher(watcher)
