"""The store: one SQLite file (WAL) shared by every tether process of a person.

Each part of it is a small class over the one connection, named for what it keeps.
"""

from __future__ import annotations

from pathlib import Path

from tether.store.checkpoints import Checkpoints
from tether.store.compactions import Compactions
from tether.store.rules import RuleBook
from tether.store.schema import connect
from tether.store.sessions import Sessions
from tether.store.tasks import Tasks
from tether.store.transcript import Transcript


class Store:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._db = connect(path)
        self.sessions = Sessions(self._db)
        self.transcript = Transcript(self._db)
        self.rules = RuleBook(self._db)
        self.compactions = Compactions(self._db)
        self.tasks = Tasks(self._db)
        self.checkpoints = Checkpoints(self._db)

    def close(self) -> None:
        self._db.close()
