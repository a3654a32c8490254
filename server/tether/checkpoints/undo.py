"""Undoing one file's change on top of what it is now: ``git merge-file`` semantics.

The turn changed a file from ``before`` to ``after``; since then it may have changed
again (the person's edits). Taking the turn's change back is a three-way merge of
``now`` and ``before`` on the common base ``after``: hunks only the person changed stay,
hunks only the turn changed go back, and where both changed the same lines nothing is
written and the file is reported as a conflict. ``None`` stands for an absent file.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tether.tools.environment import child_environment


@dataclass(frozen=True)
class Write:
    data: bytes


@dataclass(frozen=True)
class Remove:
    pass


@dataclass(frozen=True)
class Keep:
    """Nothing to do: the file is as it was before the turn."""


@dataclass(frozen=True)
class Conflict:
    reason: str


Undo = Write | Remove | Keep | Conflict


def undo(now: bytes | None, after: bytes | None, before: bytes | None) -> Undo:
    """What to do to a file that is ``now``, to take back a change from ``before`` to ``after``."""
    if now == before:
        return Keep()
    if now == after:
        return Remove() if before is None else Write(before)
    if before is None:
        if now is None:
            return Keep()
        return Conflict("the turn created it and it has changed since; it is left as it is")
    if after is None:
        return Conflict("the turn deleted it and it was created again since; left as it is")
    if now is None:
        return Conflict("it was deleted since the turn; it is left deleted")
    return _merged(now, after, before)


def _merged(now: bytes, after: bytes, before: bytes) -> Undo:
    if any(b"\0" in text for text in (now, after, before)):
        return Conflict("a binary file changed since the turn; it is left as it is")
    with tempfile.TemporaryDirectory(prefix="tether-undo-") as temp:
        names = []
        for name, text in (("now", now), ("after", after), ("before", before)):
            (Path(temp) / name).write_bytes(text)
            names.append(name)
        # Run outside any repository: no repository config reaches it.
        done = subprocess.run(
            ["git", "merge-file", "-p", "--quiet", *names],
            cwd=temp,
            env={**child_environment(()), "GIT_CEILING_DIRECTORIES": temp, "GIT_DIR": "/dev/null"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    if done.returncode == 0:
        return Write(done.stdout)
    if done.returncode > 0 and done.returncode < 128:
        lines = _conflict_lines(done.stdout)
        where = f" (lines {', '.join(lines)})" if lines else ""
        return Conflict(
            f"edits made since the turn overlap its change{where}; the file is left as it is"
        )
    said = done.stderr.decode(errors="replace").strip()
    return Conflict(f"cannot merge it: {said or 'git merge-file failed'}; left as it is")


def _conflict_lines(merged: bytes) -> list[str]:
    """Where the conflicts start, as 1-based lines of the file as it is now."""
    found: list[str] = []
    line, theirs = 0, False
    for text in merged.split(b"\n"):
        if text.startswith(b"<<<<<<< "):
            found.append(str(line + 1))
        elif text.startswith(b"======="):
            theirs = True
        elif text.startswith(b">>>>>>> "):
            theirs = False
        elif not theirs:
            line += 1
    return found[:5]
