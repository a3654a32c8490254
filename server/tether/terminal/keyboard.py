"""What the person types at the terminal: a line read without blocking the event loop,
and which of a question's choices it names.

The reading side of the console (``console.py`` writes): stdin is read on a thread of its
own, so a line typed late still reaches whichever question is asked next.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading

# Besides the numbers and the titles: y and n (the first action, the last: Allow and Deny,
# Extend and Stop), and the words a person would type.
YES, NO = ("y", "yes"), ("n", "no")


def chosen(answer: str, titles: list[str]) -> int | None:
    for index, title in enumerate(titles):
        if answer in (str(index + 1), title.lower()):
            return index
    if answer in YES:
        return 0
    if answer in NO and len(titles) > 1:
        return len(titles) - 1
    return None


def read_line_in_thread() -> asyncio.Future[str]:
    """The next line of stdin ("" at EOF), read without blocking the event loop."""
    loop = asyncio.get_running_loop()
    line: asyncio.Future[str] = loop.create_future()

    def read() -> None:
        text = sys.stdin.readline()

        def give() -> None:
            if not line.done():
                line.set_result(text)

        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits any more
            loop.call_soon_threadsafe(give)

    # A daemon thread rather than the executor: a read still blocked at exit (the
    # question was taken back when the turn was cancelled) must not hold the exit up.
    threading.Thread(target=read, daemon=True).start()
    return line
