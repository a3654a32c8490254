"""The workspace: a copy of this interpreter's standard library, committed to a fresh git repo."""

from __future__ import annotations

import os
import shutil
import subprocess
import sysconfig
from pathlib import Path

GIT = (
    "git",
    *("-c", "user.name=tether-bench", "-c", "user.email=bench@example.invalid"),
    *("-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"),
)


def build(parent: Path) -> tuple[Path, int, int]:
    """Copy the stdlib (no site-packages, no __pycache__) under ``parent``; files and bytes."""
    source = Path(sysconfig.get_paths()["stdlib"])
    root = parent / "stdlib"
    ignore = shutil.ignore_patterns("site-packages", "dist-packages", "__pycache__")
    shutil.copytree(source, root, symlinks=True, ignore=ignore)
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "stdlib")):
        subprocess.run([*GIT, *args], cwd=root, check=True, stdout=subprocess.DEVNULL)
    files = size = 0
    for here, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names:
            files += 1
            size += os.lstat(os.path.join(here, name)).st_size
    return root.resolve(), files, size
