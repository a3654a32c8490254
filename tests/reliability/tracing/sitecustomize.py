"""Put on a ``tether serve``'s ``PYTHONPATH`` by the soak campaign's debug run
(``SOAK_TRACEMALLOC=DIR python -m tests.reliability soak``; ``soak_trace.py``): Python
imports ``sitecustomize`` as it starts, before tether, so every allocation of the server
is traced. Each ``SIGUSR1`` writes a tracemalloc snapshot to ``DIR/snapshot-NNN.pickle``
(under a temporary name first: the campaign waits for the file to appear whole) and
adds a line to ``DIR/memory.tsv``: the process's resident set, what Python holds, what
SQLite holds and what the C allocator holds in use and keeps free (glibc's
``mallinfo2``), so that memory outside Python's own heap shows too; and, in
``DIR/objects-NNN.tsv``, how many objects the garbage collector tracks, by type.
``SOAK_TRACEMALLOC_TRIM=1`` then calls ``malloc_trim`` and reads the resident set again.
``SOAK_TRACEMALLOC_FRAMES=0`` traces nothing (tracemalloc's own tables weigh on the
resident set) and writes only the line (and an empty snapshot).

Without ``SOAK_TRACEMALLOC`` in the environment this module does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import itertools
import os
import signal
import sys
import tracemalloc
from collections import Counter
from pathlib import Path
from types import FrameType

FRAMES = int(os.environ.get("SOAK_TRACEMALLOC_FRAMES", "12"))  # to see tether's callers
TRIM = os.environ.get("SOAK_TRACEMALLOC_TRIM") == "1"  # then give free heap back, and read again
COLUMNS: tuple[str, ...] = ("snapshot", "rss_kib", "python_kib", "python_blocks", "sqlite_kib")
COLUMNS += ("malloc_used_kib", "malloc_free_kib", *(["rss_trimmed_kib"] if TRIM else []))


MALLINFO2 = (
    *("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks"),
    *("uordblks", "fordblks", "keepcost"),
)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in MALLINFO2]


def _counters() -> list[int]:
    """Resident set, Python's traced heap (and its blocks), SQLite's, the C allocator's in
    use and free (KiB); -1 where this system cannot tell."""
    status = Path("/proc/self/status").read_text().splitlines()
    rss = next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), -1)
    python = tracemalloc.get_traced_memory()[0] // 1024 if tracemalloc.is_tracing() else -1
    blocks = sys.getallocatedblocks()  # Python's heap, in objects, traced or not
    sqlite = used = free = -1
    if found := ctypes.util.find_library("sqlite3"):
        memory_used = ctypes.CDLL(found).sqlite3_memory_used
        memory_used.restype = ctypes.c_int64
        sqlite = memory_used() // 1024
    libc = ctypes.CDLL(None)
    if hasattr(libc, "mallinfo2"):
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
        used, free = (info.uordblks + info.hblkhd) // 1024, info.fordblks // 1024
    return [rss, python, blocks, sqlite, used, free]


def _trimmed() -> list[int]:
    """The resident set once glibc gave back the free pages of its heaps (``malloc_trim``):
    what of the resident set is memory freed but kept by the allocator."""
    libc = ctypes.CDLL(None)
    if not hasattr(libc, "malloc_trim"):
        return [-1]
    libc.malloc_trim(0)
    status = Path("/proc/self/status").read_text().splitlines()
    return [next((int(line.split()[1]) for line in status if line.startswith("VmRSS:")), -1)]


def _install(directory: Path) -> None:
    if not hasattr(signal, "SIGUSR1") or not sys.platform.startswith("linux"):
        return  # the soak reads /proc only on Linux: nothing asks elsewhere
    if FRAMES:
        tracemalloc.start(FRAMES)
    numbers = itertools.count()
    table = directory / "memory.tsv"
    table.write_text("\t".join(COLUMNS) + "\n")

    def dump(signum: int, frame: FrameType | None) -> None:
        number = next(numbers)
        kinds = Counter(type(o).__qualname__ for o in gc.get_objects())
        lines = (f"{count}\t{kind}" for kind, count in kinds.most_common())
        (directory / f"objects-{number:03d}.tsv").write_text("\n".join(lines) + "\n")
        with table.open("a") as out:
            row = [number, *_counters(), *(_trimmed() if TRIM else [])]
            out.write("\t".join(map(str, row)) + "\n")
        path = directory / f"snapshot-{number:03d}.pickle"
        partial = path.with_suffix(".partial")
        if tracemalloc.is_tracing():
            tracemalloc.take_snapshot().dump(str(partial))
        else:
            partial.write_bytes(b"")
        os.replace(partial, path)

    signal.signal(signal.SIGUSR1, dump)


if where := os.environ.get("SOAK_TRACEMALLOC"):
    _install(Path(where))
