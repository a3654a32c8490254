"""Where a workspace's index lives, and opening it: an index is only ever built from the
disk, so one that cannot be read (a crash, a stray file) is removed and built anew."""

from __future__ import annotations

import hashlib
import logging
import sqlite3
from pathlib import Path

from tether.index import shards
from tether.index.database import Database

log = logging.getLogger(__name__)


def database_path(state_dir: Path, workspace: Path) -> Path:
    """One file per workspace under ``state_dir``."""
    digest = hashlib.sha256(str(workspace).encode(errors="surrogateescape")).hexdigest()
    return state_dir / "index" / f"{digest[:24]}.sqlite3"


def opened(path: Path) -> Database:
    """The index at ``path``; a new one where it was unreadable."""
    try:
        return Database(path)
    except sqlite3.DatabaseError as exc:  # not a database
        log.warning("the workspace index was unreadable (%s); building it anew", exc)
        for stale in (path, *(Path(f"{path}{end}") for end in ("-wal", "-shm"))):
            stale.unlink(missing_ok=True)
        shards.remove(path)
        return Database(path)
