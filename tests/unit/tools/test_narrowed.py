"""How the index's candidates are ordered and judged for ripgrep (``tools/narrowed.py``)."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest

from tether.tools.listing import Listings
from tether.tools.narrowed import in_ripgreps_order, judged


def test_names_come_in_ripgreps_order_name_by_name(tmp_path: Path) -> None:
    """``--sort path`` compares a path name by name: "a/b" before "a-c" and "a.d", which a
    plain sort of the bytes puts first ("-" and "." sort before "/")."""
    names = [b"a/b", b"a-c", b"a.d", b"ab/c", b"a/z", b"a/b/c", b"a0", b"a/\xff\xfe", b"z"]
    for name in names:
        (tmp_path / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        if not (tmp_path / os.fsdecode(name)).is_dir():
            (tmp_path / os.fsdecode(name)).write_text("x")
    files = [name for name in names if (tmp_path / os.fsdecode(name)).is_file()]
    shuffled = random.Random(7).sample(files, len(files))

    ordered = in_ripgreps_order(shuffled)

    assert ordered == sorted(files, key=lambda name: name.split(b"/"))
    assert judged(tmp_path, ordered) == ordered  # judging keeps the order


@pytest.mark.skipif(os.name == "nt", reason="symbolic links and FIFOs")
def test_only_regular_files_in_real_directories_are_kept(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real/a.py").write_text("x")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere/b.py").write_text("x")
    (tmp_path / "linked").symlink_to(tmp_path / "elsewhere")
    (tmp_path / "real/link.py").symlink_to(tmp_path / "real/a.py")
    os.mkfifo(tmp_path / "real/fifo.py")

    kept = judged(tmp_path, [b"linked/b.py", b"real/link.py", b"real/fifo.py", b"real/a.py"])

    assert kept == [b"real/a.py"]


@pytest.fixture
def lstats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every path ``os.lstat`` is asked about, in order."""
    asked: list[str] = []
    real = os.lstat

    def counting(path: str | bytes | os.PathLike[str], *args: Any, **kwargs: Any) -> os.stat_result:
        asked.append(os.fsdecode(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "lstat", counting)
    return asked


def _tree(root: Path, names: list[str]) -> list[bytes]:
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x")
    return [os.fsencode(name) for name in names]


@pytest.mark.usefixtures("later")
def test_files_of_a_settled_directory_are_judged_by_its_listing(
    tmp_path: Path, lstats: list[str]
) -> None:
    names = _tree(tmp_path, [f"pkg/m{n}.py" for n in range(20)] + ["top.py"])
    assert judged(tmp_path, names) == names

    lstats.clear()
    assert judged(tmp_path, names) == names
    assert sorted(lstats) == sorted([str(tmp_path), str(tmp_path / "pkg")])  # one a directory


@pytest.mark.skipif(os.name == "nt", reason="symbolic links and FIFOs")
@pytest.mark.usefixtures("later")
@pytest.mark.parametrize("swap", ["link", "directory", "fifo", "link to a directory"])
def test_a_file_swapped_since_its_directory_was_listed_is_not_kept(
    tmp_path: Path, swap: str
) -> None:
    names = _tree(tmp_path, ["pkg/a.py", "pkg/b.py", "elsewhere/secret.py"])
    assert judged(tmp_path, names) == names  # the listing is kept

    target = tmp_path / "pkg/a.py"
    target.unlink()
    if swap == "link":
        target.symlink_to(tmp_path / "elsewhere/secret.py")
    elif swap == "directory":
        target.mkdir()
    elif swap == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to(tmp_path / "elsewhere")

    assert judged(tmp_path, names) == [b"pkg/b.py", b"elsewhere/secret.py"]


@pytest.mark.skipif(os.name == "nt", reason="symbolic links")
def test_files_of_a_directory_changed_just_now_are_judged_each_by_itself(
    tmp_path: Path, lstats: list[str]
) -> None:
    names = _tree(tmp_path, ["pkg/a.py", "pkg/b.py", "elsewhere/secret.py"])
    assert judged(tmp_path, names) == names
    (tmp_path / "pkg/a.py").unlink()
    (tmp_path / "pkg/a.py").symlink_to(tmp_path / "elsewhere/secret.py")

    lstats.clear()
    assert judged(tmp_path, names) == [b"pkg/b.py", b"elsewhere/secret.py"]
    assert str(tmp_path / "pkg/b.py") in lstats  # not listed: written to within the tick


@pytest.mark.usefixtures("later")
def test_where_times_do_not_move_with_names_each_file_is_judged_by_itself(
    tmp_path: Path, lstats: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Listings, "TRUSTED", False)  # Windows: FAT keeps a directory's time
    names = _tree(tmp_path, ["pkg/a.py", "pkg/b.py"])
    assert judged(tmp_path, names) == names

    lstats.clear()
    assert judged(tmp_path, names) == names
    assert str(tmp_path / "pkg/a.py") in lstats and str(tmp_path / "pkg/b.py") in lstats


@pytest.mark.skipif(os.name == "nt", reason="symbolic links")
@pytest.mark.usefixtures("later")
def test_files_of_a_crowded_directory_are_judged_each_by_itself(
    tmp_path: Path, lstats: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(Listings, "CROWDED", 2)
    names = _tree(tmp_path, ["pkg/a.py", "pkg/b.py", "pkg/c.py", "elsewhere/secret.py"])
    (tmp_path / "pkg/a.py").unlink()
    (tmp_path / "pkg/a.py").symlink_to(tmp_path / "elsewhere/secret.py")

    assert judged(tmp_path, names) == [b"pkg/b.py", b"pkg/c.py", b"elsewhere/secret.py"]
    assert str(tmp_path / "pkg/b.py") in lstats  # not listed: more entries than CROWDED
    assert str(tmp_path / "elsewhere/secret.py") not in lstats  # its directory was
