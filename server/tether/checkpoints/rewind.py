"""Taking a turn's change to the files back, on top of the files as they are now.

For each file the turn changed (between its two checkpoints), ``undo.py`` decides: put
back, remove (the turn created it and it is unchanged since), leave as it is (a
conflict, said why), or nothing to do. An open document is changed through the editor,
in its undo history; any other file is written atomically (renamed over), so a kill at
any moment leaves each file as it was before or after, never half. Nothing the person
owns in git (index, HEAD, branches, stash) is touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path

from tether.checkpoints.record import Checkpoints
from tether.checkpoints.repository import Blob
from tether.checkpoints.undo import Conflict, Keep, Remove, Write, undo
from tether.errors import CheckpointError, NotFound, Refused, ToolError
from tether.history import Rewind, RewindConflict, Rewound
from tether.models import RewindWhat
from tether.store.checkpoints import TurnCheckpoint
from tether.tools.atomic import write_atomically
from tether.tools.base import Editor, FileEdit, Replacement

NO_GIT_COMMANDS = (
    "this turn ran {n} command(s): outside a git repository their effects cannot be taken "
    "back (only its patches were)"
)


@dataclass(frozen=True)
class Changed:
    path: Path
    before: Blob | None
    after: Blob | None


async def rewind(
    checkpoints: Checkpoints, editor: Editor, session: str, turn: int | None, what: RewindWhat
) -> Rewound:
    """Take back turn ``turn`` (default: the last that changed files): its change to the
    files, what the model is sent of it and of everything after, or both; and record it,
    so that the transcript shows it. The caller makes sure no turn runs on the session."""
    store = checkpoints.store
    prompts = store.transcript.seqs(session, "user")
    turn = turn if turn is not None else _last_change(checkpoints, session, what, len(prompts))
    if not 1 <= turn <= len(prompts):
        raise NotFound(f"session {session!r} has no turn {turn} (it has {len(prompts)})")
    result = Rewound(session=session, turn=turn, what=what)
    if what != "conversation":
        result = await rewind_files(checkpoints, editor, session, turn, what)
    end = store.transcript.next_seq(session)
    span = (prompts[turn - 1], end) if what != "files" else (end, end)
    report = Rewind(**result.model_dump(), before=0, created="").model_dump_json()
    store.checkpoints.add_rewind(session, turn, what, span, report)
    return result


def _last_change(checkpoints: Checkpoints, session: str, what: RewindWhat, turns: int) -> int:
    changed = [c.turn for c in checkpoints.store.checkpoints.listed(session) if c.files]
    if changed:
        return changed[-1]
    if what == "conversation" and turns:
        return turns
    raise Refused(f"no turn of session {session!r} changed files")


async def rewind_files(
    checkpoints: Checkpoints, editor: Editor, session: str, turn: int, what: RewindWhat
) -> Rewound:
    """Take back what turn ``turn`` did to the files; the person's edits since stay."""
    taken = checkpoints.store.checkpoints.get(session, turn)
    if taken is None:
        raise Refused(f"turn {turn} of session {session!r} changed no files (no checkpoint)")
    changed, notes = await _changed(checkpoints, taken)
    result = Rewound(session=session, turn=turn, what=what, notes=notes)
    for change in changed:
        now = checkpoints.current(change.path)
        before = change.before.data if change.before else None
        after = change.after.data if change.after else None
        name = checkpoints.shown(change.path)
        try:
            match undo(now, after, before):
                case Write(data=data):
                    executable = bool(change.before and change.before.executable)
                    await _write(checkpoints, editor, change.path, now, data, executable)
                    result.restored.append(name)
                case Remove():
                    await asyncio.to_thread(_remove, change.path)
                    result.removed.append(name)
                case Conflict(reason=reason):
                    result.conflicts.append(RewindConflict(path=name, reason=reason))
                case Keep():
                    pass
        except (OSError, ToolError) as exc:
            reason = f"cannot write it: {getattr(exc, 'strerror', None) or exc}"
            result.conflicts.append(RewindConflict(path=name, reason=reason))
    return result


async def _changed(
    checkpoints: Checkpoints, taken: TurnCheckpoint
) -> tuple[list[Changed], list[str]]:
    notes: list[str] = []
    if taken.skipped:
        notes.append(
            f"files larger than checkpoint.max_file_mb were not kept: {', '.join(taken.skipped)}"
        )
    patched = _patched(checkpoints, taken)
    if taken.before is None:  # outside git: the before-images of the turn's patches
        if taken.commands:
            notes.append(NO_GIT_COMMANDS.format(n=taken.commands))
        return patched, notes
    repository = await checkpoints.repository()
    if repository is None:
        raise Refused("this turn's checkpoint is in a git repository that is no longer there")
    try:
        ended = taken.after
        if ended is None:  # the turn never ended (its server died): as the files are now
            ended = (await asyncio.to_thread(checkpoints.snapshot, repository)).tree
        found = await asyncio.to_thread(repository.changes, taken.before, ended)
    except CheckpointError as exc:
        raise Refused(f"cannot read turn {taken.turn}'s checkpoint: {exc}") from None
    changed = [Changed(repository.top / c.path, c.before, c.after) for c in found]
    # A patched file the snapshots did not keep (ignored, too large) is taken back from
    # its images; one they kept is taken back from them.
    kept = {checkpoints.shown(c.path) for c in changed}
    changed += [c for c in patched if checkpoints.shown(c.path) not in kept]
    return changed, notes


def _patched(checkpoints: Checkpoints, taken: TurnCheckpoint) -> list[Changed]:
    """The files the turn's patches touched, from their before- and after-images (as they
    are now where the turn never ended)."""
    changed = []
    for image in checkpoints.store.checkpoints.images(taken.session, taken.turn):
        path = checkpoints.workspace / image.path
        now = image.after if image.after_known else checkpoints.current(path)
        changed.append(Changed(path, _blob(image.before), _blob(now)))
    return changed


def _blob(data: bytes | None) -> Blob | None:
    return None if data is None else Blob(data=data, executable=False)


async def _write(
    checkpoints: Checkpoints,
    editor: Editor,
    path: Path,
    now: bytes | None,
    data: bytes,
    executable: bool,
) -> None:
    live = checkpoints.documents.live_text(path)
    if live is not None:
        with contextlib.suppress(UnicodeDecodeError):
            text = data.decode("utf-8")
            edit = FileEdit(path=path, before=live, after=text, replacements=[_span(live, text)])
            if await editor.apply(edit, label=f"tether: rewind {checkpoints.shown(path)}"):
                return
    if checkpoints.current(path) != now:
        raise ToolError("it changed while the rewind ran; it is left as it is")
    await asyncio.to_thread(_write_file, path, data, executable and now is None)


def _span(before: str, after: str) -> Replacement:
    """One replacement from ``before`` to ``after``: what lies between their common ends."""
    head = 0
    limit = min(len(before), len(after))
    while head < limit and before[head] == after[head]:
        head += 1
    tail = 0
    while tail < limit - head and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return Replacement(start=head, end=len(before) - tail, new=after[head : len(after) - tail])


def _write_file(path: Path, data: bytes, executable: bool) -> None:
    write_atomically(path, data)
    if executable:  # a deleted script comes back as one
        mode = path.stat().st_mode
        os.chmod(path, mode | (mode & 0o444) >> 2)


def _remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
