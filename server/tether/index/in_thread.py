"""A step on the index's connection, in a thread, carried to its end.

The index has one SQLite connection, used under its lock (``WorkspaceIndex``), its steps
in threads. A cancelled ``asyncio.to_thread`` returns at once while its thread runs on:
the caller then gives the lock up (a search's call cancelled with its turn), and the
next holder used the connection beside that thread, or closed it under it. Here a cancel
waits for the step's thread to end, then is raised: a step is one question or one batch,
so a cancel takes effect at the next step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_thread(func: Callable[..., T], *args: object) -> T:
    """``func(*args)`` in a thread; if cancelled meanwhile (once or more), the cancel is
    raised once it has ended."""
    step = asyncio.ensure_future(asyncio.to_thread(func, *args))
    cancelled = False
    while not step.done():
        try:
            await asyncio.wait([step])
        except asyncio.CancelledError:
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return step.result()
