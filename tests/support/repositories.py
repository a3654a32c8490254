"""Real git repositories for tests: a plain one, and one whose own config names programs
that git would run on reads (each writes a PWNED_* file when it runs)."""

from __future__ import annotations

import subprocess
from pathlib import Path

HOSTILE = """
[core]
\tfsmonitor = "touch PWNED_fsmonitor; false"
\tpager = "touch PWNED_pager; cat"
[filter "evil"]
\tclean = "touch PWNED_clean; cat"
\tsmudge = "touch PWNED_smudge; cat"
[diff "evil"]
\ttextconv = "touch PWNED_textconv; cat"
"""


def git_repository(root: Path) -> Path:
    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)

    git("init", "-q")
    (root / "a.txt").write_text("a\n")
    git("add", ".")
    git("-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init")
    return root


def hostile_repository(root: Path, fresh: bool = True) -> Path:
    if fresh:
        git_repository(root)
    with (root / ".git" / "config").open("a") as config:
        config.write(HOSTILE)
    (root / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    (root / "a.txt").write_text("a\nb\n")
    return root
