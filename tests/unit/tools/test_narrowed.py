"""How the index's candidates are ordered and judged for ripgrep (``tools/narrowed.py``)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

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
