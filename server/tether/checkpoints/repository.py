"""A workspace's git repository, as checkpoints use it: plumbing only, nothing the person owns.

A snapshot is a tree written through a temporary index seeded from the person's own
(``GIT_INDEX_FILE``, ``git add -A``, ``git write-tree``): an unchanged file costs a stat,
not a copy, and only changed files' blobs are added to the object store. A commit of
that tree, under ``refs/tether/checkpoints/``, keeps it alive until it is pruned. The
person's index, HEAD, branches, stash and work tree are never written, and every git
runs with the repository's program-naming config overridden (``tools/git_config.py``): a
hostile repository's clean filter, fsmonitor or hooks never run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.errors import CheckpointError
from tether.tools.environment import child_environment
from tether.tools.git_config import ENV, as_arguments, repository_overrides

REF_ROOT = "refs/tether/checkpoints"
# Ours, whatever any scope says: a checkpoint starts no maintenance and writes a whole index.
OURS = (
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("core.splitIndex", "false"),
    ("commit.gpgSign", "false"),
    ("core.quotePath", "false"),
)
IDENTITY = {
    "GIT_AUTHOR_NAME": "tether",
    "GIT_AUTHOR_EMAIL": "tether@localhost",
    "GIT_COMMITTER_NAME": "tether",
    "GIT_COMMITTER_EMAIL": "tether@localhost",
}
EXECUTABLE = "100755"


@dataclass(frozen=True)
class Snapshot:
    tree: str
    skipped: list[str]  # larger than the limit: left as the index has them


@dataclass(frozen=True)
class Blob:
    data: bytes
    executable: bool


@dataclass(frozen=True)
class Change:
    """One file a turn changed, relative to the repository's top: None where it is absent."""

    path: str
    before: Blob | None
    after: Blob | None


@dataclass(frozen=True)
class Repository:
    top: Path  # the work tree's root
    index: Path  # the person's index: copied, never written
    overrides: tuple[tuple[str, str], ...]

    @classmethod
    async def find(cls, workspace: Path) -> Repository | None:
        """The repository whose work tree holds ``workspace``; None outside git."""
        overrides = (*await repository_overrides(workspace), *OURS)
        try:
            out = _git(workspace, overrides, "rev-parse", "--show-toplevel", "--git-path", "index")
        except CheckpointError:
            return None
        top, index = out.decode(errors="surrogateescape").splitlines()[:2]
        return cls(Path(top), (workspace / index).resolve(), overrides)

    def git(
        self, *args: str, env: Mapping[str, str] | None = None, stdin: bytes | None = None
    ) -> bytes:
        return _git(self.top, self.overrides, *args, env=env, stdin=stdin)

    def snapshot(self, max_bytes: int, overlay: Mapping[str, bytes] | None = None) -> Snapshot:
        """The work tree as a tree object: tracked and untracked files that are not ignored;
        ``overlay`` (path: text) stands in for files whose editor text is not saved."""
        with tempfile.TemporaryDirectory(prefix="tether-checkpoint-") as temp:
            index = Path(temp) / "index"
            if self.index.exists():
                shutil.copyfile(self.index, index)
            env = {"GIT_INDEX_FILE": str(index)}
            # One walk of the work tree: what differs from the index (modified, deleted,
            # untracked and not ignored); only those are added, the large ones left out.
            status = self.git(
                "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
                env=env,
            )  # fmt: skip
            changed = _changed(status)
            skipped = [p for p in changed if _size(self.top / p) > max_bytes]
            wanted = [p for p in changed if p not in set(skipped)]
            if wanted:
                self.git(
                    "--literal-pathspecs", "add", "-A", "--ignore-errors",
                    "--pathspec-from-file=-", "--pathspec-file-nul",
                    env=env, stdin=b"\0".join(os.fsencode(p) for p in wanted),
                )  # fmt: skip
            for path, text in (overlay or {}).items():
                if path in skipped:
                    continue
                blob = self.git("hash-object", "-w", "--stdin", stdin=text).decode().strip()
                mode = EXECUTABLE if os.access(self.top / path, os.X_OK) else "100644"
                self.git("update-index", "--add", "--cacheinfo", f"{mode},{blob},{path}", env=env)
            tree = self.git("write-tree", env=env).decode().strip()
        return Snapshot(tree=tree, skipped=skipped)

    def keep(self, ref: str, tree: str, parent: str | None, message: str) -> str:
        """A commit of ``tree`` (after ``parent``) that ``ref`` keeps alive; its id."""
        parents = ("-p", parent) if parent else ()
        commit = self.git(
            "commit-tree", "--no-gpg-sign", *parents, "-m", message, tree, env=IDENTITY
        )
        commit_id = commit.decode().strip()
        self.git("update-ref", "--no-deref", ref, commit_id)
        return commit_id

    def drop(self, refs: Sequence[str]) -> None:
        """Delete ``refs``, so that ``git gc`` can reclaim what only they kept."""
        lines = "".join(f"delete {ref}\n" for ref in refs)
        if lines:
            self.git("update-ref", "--stdin", stdin=lines.encode())

    def changes(self, before: str, after: str) -> list[Change]:
        """Each file that differs between two checkpoints, with both versions."""
        out = self.git("diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", before, after)
        fields = out.split(b"\0")
        found: list[tuple[str, str, str, str, str]] = []
        for head, raw in zip(fields[::2], fields[1::2], strict=False):
            if not head.startswith(b":"):
                continue
            old_mode, new_mode, old_id, new_id, _ = head[1:].decode().split(" ")
            found.append((raw.decode(errors="surrogateescape"), old_mode, new_mode, old_id, new_id))
        wanted = [i for _, a, b, x, y in found for i, m in ((x, a), (y, b)) if m != "000000"]
        data = self.blobs(wanted)

        def blob(mode: str, object_id: str) -> Blob | None:
            if mode == "000000":
                return None
            return Blob(data=data[object_id], executable=mode == EXECUTABLE)

        return [Change(p, blob(a, x), blob(b, y)) for p, a, b, x, y in found]

    def blobs(self, ids: Sequence[str]) -> dict[str, bytes]:
        """Objects' contents, read in one ``cat-file --batch``."""
        unique = list(dict.fromkeys(ids))
        if not unique:
            return {}
        out = self.git("cat-file", "--batch", stdin="".join(f"{i}\n" for i in unique).encode())
        found: dict[str, bytes] = {}
        at = 0
        for object_id in unique:
            end = out.index(b"\n", at)
            _, _, size = out[at:end].decode().split(" ")
            start = end + 1
            found[object_id] = out[start : start + int(size)]
            at = start + int(size) + 1
        return found


def _git(
    cwd: Path,
    overrides: Sequence[tuple[str, str]],
    *args: str,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> bytes:
    command = ["git", "--no-pager", *as_arguments(list(overrides)), *args]
    environment = {**child_environment(()), **ENV, **(env or {})}
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        if env is None or name not in env:
            environment.pop(name, None)
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=environment,
            input=stdin,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            check=False,
        )
    except OSError as exc:
        raise CheckpointError(f"cannot run git: {exc}") from exc
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip()
        raise CheckpointError(f"git {args[0]} failed: {said or done.returncode}")
    return done.stdout


def _changed(status: bytes) -> list[str]:
    """The paths of ``git status --porcelain=v1 -z --no-renames``: ``XY path`` entries."""
    entries = (entry for entry in status.split(b"\0") if len(entry) > 3)
    return list(dict.fromkeys(os.fsdecode(entry[3:]) for entry in entries))


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0
