"""The serving process keeps its secrets from the programs it runs.

Once the settings are read, the providers' keys leave the server's environment, and
on Linux the bytes of its original environment block are overwritten too: that block
is what ``/proc/PID/environ`` shows, and an approved command could read its parent's
(``cat /proc/$PPID/environ``). The process is also made non-dumpable, which keeps
other processes of the same user out of its memory (``/proc/PID/mem``, ptrace).
"""

from __future__ import annotations

import ctypes
import logging
import os
import sys

log = logging.getLogger(__name__)
KEYS = ("TETHER_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY")
PR_SET_DUMPABLE = 4


def forget_keys() -> None:
    """Take the keys out of this process's environment, and out of its memory image."""
    if sys.platform.startswith("linux"):
        _wipe_original_environment(KEYS)
    for name in KEYS:
        os.environ.pop(name, None)  # also unsetenv(): children never inherit them


def make_undumpable() -> None:
    if not sys.platform.startswith("linux"):
        return  # macOS and Windows keep other users' processes out by other means
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError) as exc:
        log.info("could not make the process non-dumpable: %s", exc)


def _wipe_original_environment(names: tuple[str, ...]) -> None:
    """Overwrite the values of ``names`` where ``environ`` points: the original block."""
    try:
        libc = ctypes.CDLL(None)
        environ = ctypes.POINTER(ctypes.c_void_p).in_dll(libc, "environ")
    except (OSError, ValueError) as exc:
        log.info("could not reach the environment block: %s", exc)
        return
    prefixes = tuple(f"{name}=".encode() for name in names)
    at = 0
    while address := environ[at]:
        entry = ctypes.string_at(address)
        if entry.startswith(prefixes):
            start = entry.index(b"=") + 1
            ctypes.memset(address + start, ord("*"), len(entry) - start)
        at += 1
