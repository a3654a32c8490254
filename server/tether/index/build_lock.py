"""One build of a workspace's index at a time, whichever process runs it.

Two editor windows on one workspace (two Neovims in one repository) each run a server
of the same index. Their first passes over a new workspace once both read every file,
twice the work and the same documents written twice; now the second waits for the
first's passes to end, and then its own finds next to nothing to read (the sizes and
mtimes, or git's state, the first recorded). Its searches meanwhile run ripgrep, as
during any build. The lock is the operating system's lock on a file beside the index
(``filelock``: ``flock`` on Linux and macOS, ``LockFileEx`` on Windows), so a server
that dies lets go of it with its process.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from filelock import FileLock, Timeout

log = logging.getLogger(__name__)
POLL_S = 0.25  # how often a waiting server tries again


def path_of(database: Path) -> Path:
    return database.with_name(f"{database.name}.lock")


@contextlib.asynccontextmanager
async def held(
    database: Path, waiting: Callable[[], None], stop: Callable[[], bool]
) -> AsyncIterator[bool]:
    """The index's build lock, held for the block; ``waiting`` is called once if another
    process holds it. False (and not held) when ``stop`` says to give up waiting first.
    Where no lock can be had (a file system that refuses it), the build goes on without."""
    lock = FileLock(path_of(database), thread_local=False)
    got = await _acquired(lock, waiting, stop)
    if got is not True:
        yield got is None
        return
    try:
        yield True
    finally:
        lock.release()


async def _acquired(
    lock: FileLock, waiting: Callable[[], None], stop: Callable[[], bool]
) -> bool | None:
    """True once held; False when ``stop`` said to give up; None when it cannot be had."""
    told = False
    while True:
        try:
            Path(lock.lock_file).parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock.acquire(timeout=0)  # one try: never blocks the event loop
            return True
        except Timeout:
            pass
        except OSError as exc:
            log.warning("the index's build lock could not be taken (%s); building anyway", exc)
            return None
        if stop():
            return False
        if not told:
            waiting()
            told = True
        await asyncio.sleep(POLL_S)
