"""What the terminal answers from the store itself, with no server: ``tether sessions``,
``rules``, ``forget`` and ``rewind``, and a ``tether approve`` / ``deny`` that has nothing
to decide.

None of these runs a turn, so none needs what a server costs to start (about a second of
importing pygls and lsprotocol, then ``initialize``); the store is the one every tether
process shares (SQLite, WAL), and the service reads it the same way: a session whose
turn's process died shows as ``interrupted``, the rules are the workspace's and its
sessions'. A decision on a session whose turn is parked goes to a server, which resumes
the turn; only that server can say which calls wait, so a parked session is never
judged here.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from tether.agent.liveness import as_seen, running_elsewhere
from tether.checkpoints.record import Checkpoints
from tether.checkpoints.rewind import rewind as rewind_turn
from tether.config import CheckpointSettings, load_leniently
from tether.errors import NothingWaiting, Refused, SessionBusy
from tether.models import PARKED, RewindWhat
from tether.store import Store
from tether.terminal.console import Console
from tether.terminal.screen_text import visible
from tether.tools.base import NoDocuments, NoEditor


class Unreadable(Exception):
    """The store cannot be opened or read; the message says where and why."""


@contextmanager
def opened(env: Mapping[str, str], options: dict[str, Any] | None) -> Iterator[Store]:
    """The store the server would open with these settings; what is wrong with them is
    said on stderr, as the server would say it."""
    settings, problems = load_leniently(env, {} if options is None else {"init": options})
    for problem in problems:
        print(f"tether: {problem}", file=sys.stderr)
    path = settings.state_dir / "sessions.sqlite3"
    try:
        store = Store(path)
        try:
            yield store
        finally:
            store.close()
    except (OSError, sqlite3.Error) as exc:
        raise Unreadable(f"cannot read the sessions in {path}: {exc}") from exc


def sessions(store: Store, workspace: Path) -> int:
    listed = [as_seen(s).model_dump() for s in store.sessions.listed(workspace)]
    show_sessions(listed, workspace)
    return 0


def rules(store: Store, workspace: Path) -> int:
    listed = [
        {"id": str(r.id), "tool": r.tool, "match": r.words, "scope": r.scope, "verdict": r.verdict}
        | ({"session": r.scope_id} if r.scope == "session" else {})
        for r in store.rules.of_workspace(str(workspace))
    ]
    show_rules(listed, workspace)
    return 0


def forget(store: Store, workspace: Path, rule: str) -> int:
    """Forget one of this workspace's rules (never another workspace's)."""
    ours = {str(r.id) for r in store.rules.of_workspace(str(workspace))}
    removed = rule in ours and store.rules.remove(int(rule))
    Console().note(f"forgot rule {rule}" if removed else f"no rule {rule} here", None)
    return 0 if removed else 1


def undecidable(store: Store, session: str) -> Refused | None:
    """Why ``tether approve`` / ``deny`` of ``session`` has nothing to decide (an unknown
    session, one whose turn is not parked), or None: a server must decide."""
    try:
        info = store.sessions.get(session)
    except Refused as exc:
        return exc
    if info.status == PARKED or running_elsewhere(info):  # the server says which, or busy
        return None
    return NothingWaiting(session)


def rewind(store: Store, workspace: Path, session: str, turn: int | None, what: RewindWhat) -> int:
    """``tether rewind``: take a turn back, as ``tether.rewind`` does (no editor is open
    here, so every file is written on disk, atomically)."""
    try:
        info = store.sessions.get(session)
        if running_elsewhere(info):
            raise SessionBusy(session)
        if info.status == PARKED:
            raise Refused(f"session {session!r} waits for approval: decide its calls first")
        checkpoints = Checkpoints(store, workspace, NoDocuments(), CheckpointSettings)
        result = asyncio.run(rewind_turn(checkpoints, NoEditor(), session, turn, what))
    except Refused as exc:
        print(f"tether: {exc}", file=sys.stderr)
        return 1
    lines = [f"rewound turn {result.turn} ({result.what})"]
    lines += [f"restored {path}" for path in result.restored]
    lines += [f"removed {path}" for path in result.removed]
    lines += [f"left as it is: {c.path}: {c.reason}" for c in result.conflicts]
    lines += [f"note: {note}" for note in result.notes]
    print("\n".join(lines))
    return 0


def show_rules(listed: list[dict[str, Any]], workspace: Path) -> None:
    """The remembered approvals, one a line: whether each allows or denies, what it covers."""
    if not listed:
        Console().note(f"no remembered approvals in {workspace}", None)
        return
    for rule in listed:
        where = f"session {rule['session']}" if rule.get("session") else "workspace"
        says = f"{rule['verdict']:<5}  {rule['tool']:<8} {where:<20} {rule['match']}"
        line = f"{rule['id']:>4}  {says}"
        print(visible(line))
    Console().note("forget one with `tether forget ID`", None)


def show_sessions(listed: list[dict[str, Any]], workspace: Path) -> None:
    """A table of sessions, newest first."""
    if not listed:
        Console().note(f"no sessions yet in {workspace}", None)
        return
    rows = [("ID", "STATUS", "UPDATED", "TITLE")] + [
        (s["id"], s["status"], _local_time(s["updated"]), re.sub(r"\s+", " ", s["title"]))
        for s in sorted(listed, key=lambda s: str(s["updated"]), reverse=True)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        cells = [*(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)), row[3]]
        print(visible("  ".join(cells)))


def _local_time(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).astimezone().strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return stamp
