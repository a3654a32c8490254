"""Taking a turn's checkpoints: before its first change, and when it ends.

A change is an allowed ``patch`` or ``command``, recorded before it runs. In a git
workspace a checkpoint is a commit of the whole work tree (``repository.py``); outside
git it is the before-image of each file the turn's patches touch, and a count of the
commands it ran (whose effects nothing can take back there). Open documents count as
their editor text. A failed checkpoint is logged and never stops the turn.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from tether.checkpoints.repository import REF_ROOT, Repository, Snapshot
from tether.config import CheckpointSettings
from tether.errors import CheckpointError, ToolError
from tether.history import Checkpoint
from tether.models import now
from tether.store import Store
from tether.tools.base import Documents, EditsFiles, Sandboxable, Tool, ToolContext

log = logging.getLogger(__name__)


def ref(session: str, turn: int) -> str:
    return f"{REF_ROOT}/{session}/{turn}"


class Checkpoints:
    """One per server: the workspace's checkpoints, kept in the store (and its git)."""

    def __init__(
        self,
        store: Store,
        workspace: Path,
        documents: Documents,
        settings: Callable[[], CheckpointSettings],
    ) -> None:
        self.store = store
        self.workspace = workspace
        self.documents = documents
        self.settings = settings

    async def repository(self) -> Repository | None:
        """The workspace's git repository, None outside git: found each time, with the
        overrides of its config as it is now (a repository may turn hostile between two
        checkpoints: a checkout, a patch to .git/config)."""
        return await Repository.find(self.workspace)

    def turn(self, session: str) -> int:
        """The session's current turn: 1 for its first prompt."""
        return len(self.store.transcript.seqs(session, "user"))

    async def before_change(
        self, session: str, tool: Tool[Any], params: Any, ctx: ToolContext
    ) -> None:
        """Called before an allowed call runs: the turn's checkpoint, if this is a change."""
        is_patch = isinstance(tool, EditsFiles)
        if not (is_patch or isinstance(tool, Sandboxable)):
            return  # a read that asked (it reaches outside the workspace) changes nothing
        turn = self.turn(session)
        try:
            if (repository := await self.repository()) is not None:
                if self.store.checkpoints.get(session, turn) is None:
                    snapshot = await asyncio.to_thread(self.snapshot, repository)
                    commit = await asyncio.to_thread(
                        repository.keep, ref(session, turn), snapshot.tree, None, _says(turn)
                    )
                    self.store.checkpoints.begin(session, turn, commit, snapshot.skipped)
            else:
                self.store.checkpoints.begin(session, turn, None, [])
            # Outside git this is the checkpoint; in git it covers a file the snapshot does
            # not keep (ignored, as a workspace inside a repository that ignores it, or too
            # large): a patch is always taken back.
            if is_patch:
                await self._keep_before(session, turn, tool, params, ctx)
            if not is_patch:
                self.store.checkpoints.ran_command(session, turn)
        except CheckpointError as exc:
            log.warning("no checkpoint before turn %d of session %s: %s", turn, session, exc)

    async def turn_ended(self, session: str) -> None:
        """The turn's second checkpoint, and what it changed; nothing if it changed nothing."""
        turn = self.turn(session)
        if (begun := self.store.checkpoints.get(session, turn)) is None:
            return
        try:
            repository = await self.repository()
            if repository is not None and begun.before is not None:
                snapshot = await asyncio.to_thread(self.snapshot, repository)
                commit = await asyncio.to_thread(
                    repository.keep, ref(session, turn), snapshot.tree, begun.before, _says(turn)
                )
                changes = await asyncio.to_thread(repository.changes, begun.before, commit)
                files = [self.shown(repository.top / c.path) for c in changes]
                files += [f for f in self._images_after(session, turn) if f not in files]
                self.store.checkpoints.end(session, turn, commit, files, snapshot.skipped)
                return
            files = self._images_after(session, turn)
            self.store.checkpoints.end(session, turn, None, files, [])
        except CheckpointError as exc:
            log.warning("no checkpoint after turn %d of session %s: %s", turn, session, exc)

    def _images_after(self, session: str, turn: int) -> list[str]:
        """Keep the after-image of each file the turn's patches touched; those it changed."""
        files = []
        for image in self.store.checkpoints.images(session, turn):
            after = self.current(self.workspace / image.path)
            self.store.checkpoints.keep_after(session, turn, image.path, after)
            if after != image.before:
                files.append(image.path)
        return files

    def listed(self, session: str) -> list[Checkpoint]:
        return [
            Checkpoint(turn=c.turn, files=c.files, created=c.created, skipped=c.skipped or None)
            for c in self.store.checkpoints.listed(session)
        ]

    async def prune(self) -> int:
        """Forget checkpoints older than ``checkpoint.keep_days``; their refs go, so that
        ``git gc`` can reclaim what only they kept."""
        old = self.store.checkpoints.older_than(now() - timedelta(days=self.settings().keep_days))
        if not old:
            return 0
        try:
            if (repository := await self.repository()) is not None:
                refs = [ref(c.session, c.turn) for c in old if c.before]
                await asyncio.to_thread(repository.drop, refs)
        except CheckpointError as exc:
            log.warning("old checkpoints kept: %s", exc)
            return 0
        for c in old:
            self.store.checkpoints.remove(c.session, c.turn)
        return len(old)

    def current(self, path: Path) -> bytes | None:
        """A file as the person sees it: the editor's text if open, else the disk's."""
        live = self.documents.live_text(path)
        if live is not None:
            return live.encode("utf-8")
        try:
            return path.read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def shown(self, path: Path) -> str:
        inside = path == self.workspace or path.is_relative_to(self.workspace)
        return path.relative_to(self.workspace).as_posix() if inside else str(path)

    def snapshot(self, repository: Repository) -> Snapshot:
        limit = int(self.settings().max_file_mb * 1024 * 1024)
        overlay: dict[str, bytes] = {}
        for path in self.documents.unsaved():
            text = self.documents.live_text(path)
            if text is not None and path.is_relative_to(repository.top):
                overlay[path.relative_to(repository.top).as_posix()] = text.encode("utf-8")
        return repository.snapshot(limit, overlay)

    async def _keep_before(
        self, session: str, turn: int, tool: Any, params: Any, ctx: ToolContext
    ) -> None:
        try:
            edit = await tool.plan(params, ctx)
        except ToolError:
            return  # it will fail the same way when it runs: nothing changes
        if not ctx.inside(edit.path):
            return
        before = None if edit.before is None else edit.before.encode("utf-8")
        self.store.checkpoints.keep_before(session, turn, self.shown(edit.path), before)


def _says(turn: int) -> str:
    return f"tether checkpoint: turn {turn}"
