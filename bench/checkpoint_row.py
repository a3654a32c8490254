"""Row: a checkpoint of a workspace of 30,000 files with 3 changed (goal ≤ 150 ms), and
what it adds to the repository's object store (goal: only the changed files' blobs)."""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

from bench.timing import Row, ms
from bench.tree import GIT
from tether.checkpoints.repository import Repository

FILES = 30_000


def build(parent: Path) -> Path:
    """30,000 small files in 300 directories, committed."""
    root = parent / "checkpoint-tree"
    for n in range(FILES):
        folder = root / f"d{n % 300:03}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{n}.py").write_text(f"value = {n}\n")
    steps = (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "files"), ("gc", "-q"))
    for args in steps:  # packed at once: no background gc moves objects while measured
        subprocess.run([*GIT, "-c", "gc.auto=0", *args], cwd=root, check=True)
    return root.resolve()


def loose_objects(root: Path) -> set[str]:
    store = root / ".git" / "objects"
    return {f"{d.name}{f.name}" for d in store.iterdir() if len(d.name) == 2 for f in d.iterdir()}


async def row(parent: Path, reps: int) -> Row:
    root = build(parent)
    repository = await Repository.find(root)
    assert repository is not None
    repository.snapshot(10 * 2**20)  # the first after the commit: its new trees
    times, blobs, trees = [], [], []
    for rep in range(reps):
        for n in (1, 2, 3):
            (root / f"d{n:03}" / f"f{n}.py").write_text(f"value = {n}  # rep {rep}\n")
        had = loose_objects(root)
        start = time.perf_counter()
        repository.snapshot(10 * 2**20)
        times.append(time.perf_counter() - start)
        added = loose_objects(root) - had
        kinds = repository.git("cat-file", "--batch-check", stdin="\n".join(added).encode())
        blobs.append(kinds.count(b" blob "))
        trees.append(kinds.count(b" tree "))
    took = statistics.median(times)
    return Row(
        f"checkpoint, {FILES:,} files, 3 changed",
        ms(took),
        "150 ms goal",
        f"{took / 0.150:.2f}x",
        f"adds {statistics.median(blobs):.0f} blobs + {statistics.median(trees):.0f} trees "
        "per checkpoint (goal: the 3 changed files' blobs)",
    )
