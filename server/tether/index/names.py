"""Which file holds each document a question found.

Asked of the files' index, a document costs a probe: naming the 8,045 documents of
``def __init__`` on the bench's big tree (42,525 files) took 14 ms, a fifth of that
search. A map from document to file, made once after the index was last written, names
them in 0.8 ms; making it reads every file's row (64 ms there, ~150 bytes a file kept),
so it is made only once a question of many documents has wanted it (``MANY``, or a
quarter of the files' in a smaller index: there a map costs as much to make as naming
two-thirds of its files' documents, 1.3 µs a file against 2.0 a document, and the third
such question has repaid it; the standard library's ``def __init__`` names 727 documents
of 2,450 files: 1.4 ms by the files' index, 0.06 by a map made in 3.1), and then off that
question's way, in the background (``WorkspaceIndex``). A map is used only for
the version of the index it was made from (``Database.version``): after any write, this
server's or another's, documents are named by the files' index again until the next map.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tether.index.database import Kind

MANY = 2_000  # documents: a question naming more wants a map
SHARE = 4  # or naming a quarter of the files' documents, in a smaller index
MOST_FILES = 250_000  # an index of more files keeps none (~40 MB at this many)


class Names:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db
        self._kept: tuple[Hashable, dict[int, tuple[bytes, Kind]]] | None = None
        self.wanted = False  # a question of many documents found no map of its version

    def of(self, docs: Sequence[int], version: Hashable, files: int) -> list[tuple[bytes, Kind]]:
        """The files these documents belong to (a document no file names: none), of an
        index of ``files`` files."""
        if self._kept is not None and self._kept[0] == version:
            names = self._kept[1]
            return [names[doc] for doc in docs if doc in names]
        self.wanted |= len(docs) >= min(MANY, max(1, files // SHARE))
        rows = self.db.execute(
            "SELECT path, kind FROM files WHERE doc IN (SELECT value FROM json_each(?))",
            (f"[{','.join(map(str, docs))}]",),
        )
        return [(bytes(path), kind) for path, kind in rows]

    def keep(self, version: Hashable, files: int) -> None:
        """Make the map of the index as it is now, at ``version``."""
        self.wanted, self._kept = False, None
        if files > MOST_FILES:
            return
        rows = self.db.execute("SELECT doc, path, kind FROM files WHERE doc IS NOT NULL")
        self._kept = (version, {doc: (bytes(path), kind) for doc, path, kind in rows})
