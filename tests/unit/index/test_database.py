"""The index's database: the names under a directory, and its version, follow every
write, this connection's and another server's."""

from __future__ import annotations

from collections.abc import Hashable
from pathlib import Path

import pytest

from tether.index import names
from tether.index.database import Database, Seen


def seen(name: bytes) -> Seen:
    return Seen(name, 1, 3, "text", "abc")


def test_the_names_under_a_directory_follow_every_write(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    db, other = Database(path), Database(path)  # two editor windows on one workspace
    try:
        db.put([seen(b"a.py"), seen(b"sub/b.py")])
        assert sorted(db.below(b"")) == [b"a.py", b"sub/b.py"]
        assert db.below(b"sub") == [b"sub/b.py"]

        db.put([seen(b"sub/c.py")], gone=[b"a.py"])  # this server's own write
        assert sorted(db.below(b"")) == [b"sub/b.py", b"sub/c.py"]
        assert sorted(db.below(b"sub")) == [b"sub/b.py", b"sub/c.py"]

        other.put([seen(b"d.py")])  # another server's
        assert sorted(db.below(b"")) == [b"d.py", b"sub/b.py", b"sub/c.py"]

        other.clear()  # another server started the index afresh
        assert db.below(b"") == []
        db.put([seen(b"e.py")])
        db.clear()
        assert db.below(b"") == []
    finally:
        db.close()
        other.close()


def test_its_version_changes_with_every_write_of_any_server(tmp_path: Path) -> None:
    """What a listing made from the names is kept by (``WorkspaceIndex.kept``)."""
    path = tmp_path / "index.sqlite3"
    db, other = Database(path), Database(path)
    try:
        versions = [db.version()]
        assert db.version() == versions[-1]  # reading changes nothing
        for write in (
            lambda: db.put([seen(b"a.py")]),
            lambda: other.put([seen(b"b.py")]),
            lambda: db.put([], gone=[b"a.py"]),
            lambda: other.clear(),
            lambda: db.clear(),
        ):
            write()
            assert db.version() not in versions
            versions.append(db.version())
    finally:
        db.close()
        other.close()


def test_a_write_replaces_and_drops_in_batches_and_counts_the_documents_left_behind(
    tmp_path: Path,
) -> None:
    """Past the names a statement takes (1,200 files in one write), read twice in one
    batch, and both read and gone: each document left behind is garbage once."""
    db = Database(tmp_path / "index.sqlite3")
    try:
        many = [seen(f"d/{n:04}.py".encode()) for n in range(1_200)]
        db.put(many)
        assert db.count() == 1_200 and db.garbage() == 0
        db.put([seen(b"d/0000.py"), seen(b"d/0000.py"), seen(b"new.py")], gone=[b"d/0000.py"])
        assert db.garbage() == 1  # d/0000.py's first document, once
        db.put([], gone=[file.rel for file in many[1:]])
        assert db.garbage() == 1_200
        assert sorted(db.below(b"")) == [b"d/0000.py", b"new.py"]
    finally:
        db.close()


def test_candidates_past_the_bound_are_none_documents_left_behind_counted(tmp_path: Path) -> None:
    """The bound is on documents, so a changed file's old document counts until the
    index is started again: it may say None a little early, never late, and never names
    a file by a document it no longer has."""
    db = Database(tmp_path / "index.sqlite3")
    try:
        db.put([seen(f"{n}.py".encode()) for n in range(3)])
        assert sorted(db.matching([["abc"]], 3, 0.0) or []) == [
            (f"{n}.py".encode(), "text") for n in range(3)
        ]
        assert db.matching([["abc"]], 2, 0.0) is None
        db.put([seen(b"0.py")])  # read again: its first document is left behind
        assert db.matching([["abc"]], 3, 0.0) is None
        assert sorted(db.matching([["abc"]], 4, 0.0) or []) == [
            (f"{n}.py".encode(), "text") for n in range(3)
        ]
    finally:
        db.close()


def test_a_question_of_a_quarter_of_a_small_indexs_documents_wants_a_map(
    tmp_path: Path,
) -> None:
    """Fewer than ``MANY``: in a small index the map costs as much to make as naming
    two-thirds of its documents, and the third such question has repaid it."""
    db = Database(tmp_path / "index.sqlite3")
    try:
        db.put(
            [Seen(f"{n}.py".encode(), 1, 3, "text", "abc" if n < 2 else "xyz") for n in range(8)]
        )
        assert len(db.matching([["abc"]], 10, 0.0) or []) == 2  # 2 of 8 files: a quarter
        assert db.names.wanted and names.MANY > 2
        db.keep_names()
        assert not db.names.wanted
        db.put([seen(b"8.py")])  # the map is of the index before: 9 files now
        assert len(db.matching([["abc"]], 10, 0.0) or []) == 3  # a third
        assert db.names.wanted
        db.keep_names()
        db.put([seen(b"9.py"), Seen(b"0.py", 1, 3, "text", "xyz")])
        assert len(db.matching([["abc"]], 10, 0.0) or []) == 3  # 3 of 10: still a quarter
        assert db.names.wanted
        db.keep_names()
        db.put([Seen(f"{n}.py".encode(), 1, 3, "text", "xyz") for n in range(10, 20)])
        assert len(db.matching([["abc"]], 10, 0.0) or []) == 3  # 3 of 20 (and 0.py's old
        # document, named by no file): less
        assert not db.names.wanted
    finally:
        db.close()


def test_a_question_of_many_documents_names_them_by_a_map_of_its_version_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The map from document to file is made once a question of many documents wanted it,
    and used only while the index is as it was made from: after a write of this server or
    another's, a file read again is named by its new document, and its old one by none."""
    monkeypatch.setattr(names, "MANY", 3)
    path = tmp_path / "index.sqlite3"
    db, other = Database(path), Database(path)
    try:
        db.put([seen(f"{n}.py".encode()) for n in range(4)])
        every = sorted((f"{n}.py".encode(), "text") for n in range(4))
        assert sorted(db.matching([["abc"]], 10, 0.0) or []) == every
        assert db.names.wanted
        db.keep_names()
        assert not db.names.wanted
        monkeypatch.setattr(db.names, "db", None)  # asked of the map alone here
        assert sorted(db.matching([["abc"]], 10, 0.0) or []) == every
        monkeypatch.setattr(db.names, "db", db.db)

        other.put([Seen(b"0.py", 2, 3, "text", "xyz")])  # another server's write
        assert sorted(db.matching([["abc"]], 10, 0.0) or []) == every[1:]
        assert db.matching([["xyz"]], 10, 0.0) == [(b"0.py", "text")]
        keep = db.names.keep

        def while_another_writes(version: Hashable, files: int) -> None:
            keep(version, files)
            other.put([Seen(b"2.py", 2, 3, "text", "xyz")])  # before the map is used

        db.names.keep = while_another_writes
        db.keep_names()
        assert sorted(db.matching([["xyz"]], 10, 0.0) or []) == [every[0], every[2]]
        db.names.keep = keep
        db.keep_names()
        db.put([Seen(b"1.py", 2, 3, "text", "xyz")])  # and this server's
        assert sorted(db.matching([["abc"]], 10, 0.0) or []) == [every[3]]
        assert sorted(db.matching([["xyz"]], 10, 0.0) or []) == every[:3]
    finally:
        db.close()
        other.close()
