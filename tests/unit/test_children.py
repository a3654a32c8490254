from __future__ import annotations

import asyncio
import sys
import threading
import warnings

import pytest

from tether.children import reap_without_threads


@pytest.mark.skipif(
    sys.platform != "linux" or sys.version_info >= (3, 12), reason="Python 3.11 on Linux"
)
async def test_programs_are_waited_for_without_a_thread_each() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        before = asyncio.get_child_watcher()
    reap_without_threads()
    try:
        procs = [await asyncio.create_subprocess_exec("sleep", "0.3") for _ in range(3)]
        waiting = [t.name for t in threading.enumerate() if "waitpid" in t.name]
        codes = [await proc.wait() for proc in procs]
    finally:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            asyncio.set_child_watcher(before)  # as it was, for the tests after
    assert codes == [0, 0, 0] and waiting == []


def test_outside_a_running_loop_it_changes_nothing() -> None:
    reap_without_threads()  # no loop: nothing to attach to, and no error
