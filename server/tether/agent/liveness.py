"""Whether the process that runs a session's turn still lives: several tether processes
may share one store, and one that died (kill -9, a crash) leaves its sessions marked
``running``."""

from __future__ import annotations

import os
import sys

from tether.models import SessionInfo


def alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if sys.platform == "win32":
        import ctypes

        # SYNCHRONIZE access is enough to learn whether the process exists.
        handle = ctypes.windll.kernel32.OpenProcess(0x00100000, False, pid)
        if not handle:
            return False
        still_active = ctypes.windll.kernel32.WaitForSingleObject(handle, 0) == 0x102
        ctypes.windll.kernel32.CloseHandle(handle)
        return bool(still_active)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running_elsewhere(info: SessionInfo) -> bool:
    """A turn of this session runs in another live tether process."""
    return info.status == "running" and info.owner not in (None, os.getpid()) and alive(info.owner)


def as_seen(info: SessionInfo) -> SessionInfo:
    """A session left `running` by a process that died shows as `interrupted`."""
    if info.status == "running" and (info.owner is None or not alive(info.owner)):
        return info.model_copy(update={"status": "interrupted"})
    return info
