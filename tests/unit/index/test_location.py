"""Where a workspace's index lives, and an unreadable one replaced."""

from __future__ import annotations

from pathlib import Path

from tether.index.database import Seen
from tether.index.location import database_path, opened
from tether.index.trigrams import document


def test_each_workspace_has_its_own_file_under_the_state_dir(tmp_path: Path) -> None:
    one = database_path(tmp_path, Path("/work/one"))
    assert one == database_path(tmp_path, Path("/work/one"))
    assert one != database_path(tmp_path, Path("/work/two"))
    assert one.parent == tmp_path / "index" and one.suffix == ".sqlite3"


def test_a_name_that_is_no_utf8_has_a_place_too(tmp_path: Path) -> None:
    odd = Path("/work/caf\udce9")  # a byte that is no UTF-8, as os.fsdecode gives it
    assert database_path(tmp_path, odd) != database_path(tmp_path, Path("/work/café"))


def test_an_unreadable_index_and_its_journal_are_replaced_by_a_new_one(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    path.write_bytes(b"not a database at all" * 100)
    Path(f"{path}-wal").write_bytes(b"stray")
    db = opened(path)
    try:
        db.put([Seen(b"a.py", 1, 10, "text", document(b"alpha_marker"))])
        assert db.matching([["alp", "pha"]], 10, 1.0) == [(b"a.py", "text")]
    finally:
        db.close()


def test_a_readable_index_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "index.sqlite3"
    db = opened(path)
    db.put([Seen(b"a.py", 1, 10, "text", document(b"alpha_marker"))])
    db.close()
    again = opened(path)
    try:
        assert again.count() == 1
    finally:
        again.close()
