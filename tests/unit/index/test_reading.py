"""How the index names a file (its workspace-relative path, "/"-separated, as bytes) and
reads it (whole, up to the cap, classified as ripgrep would treat it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.index.reading import _head, absolute, examine, relative


@pytest.mark.parametrize(
    ("root", "path", "rel"),
    [
        ("/work/ws", "/work/ws/src/a.py", b"src/a.py"),
        ("/work/ws", "/work/ws/top.py", b"top.py"),
        ("/", "/etc/hosts", b"etc/hosts"),
        ("/work/ws", "/work/ws", b"."),
        ("/work/ws", "/work/ws/caf\udce9/x.txt", b"caf\xe9/x.txt"),  # no UTF-8: its bytes
        ("/work/ws", "/work/ws/../ws2/a.py", b"../ws2/a.py"),  # as lexical as relative_to
    ],
)
def test_a_path_under_the_root_is_named_as_relative_to_names_it(
    root: str, path: str, rel: bytes
) -> None:
    assert relative(Path(root), Path(path)) == rel
    assert relative(Path(root), Path(path)) == os.fsencode(
        Path(path).relative_to(Path(root)).as_posix()
    )


@pytest.mark.parametrize("path", ["/work/ws2/a.py", "/work/w", "/elsewhere/a.py"])
def test_a_path_not_under_the_root_is_refused(path: str) -> None:
    with pytest.raises(ValueError):
        relative(Path("/work/ws"), Path(path))


def test_a_name_comes_back_to_its_path() -> None:
    root = Path("/work/ws")
    path = root / "sub" / "caf\udce9.txt"
    assert absolute(root, relative(root, path)) == path


@pytest.mark.parametrize(
    ("content", "kind", "kept"),
    [
        (b"x" * 64, "text", True),  # exactly the cap: whole
        (b"x" * 65, "big", False),  # one byte past it
        (b"x" * 10 + b"\0", "binary", False),
        (b"\xff\xfex\0", "wide", False),
        (b"x" * 70 + b"\0", "late", False),  # a NUL past the cap, in a big file
        (b"", "text", True),
    ],
)
def test_a_file_is_read_whole_up_to_the_cap_and_classified(
    tmp_path: Path, content: bytes, kind: str, kept: bool
) -> None:
    (tmp_path / "f").write_bytes(content)
    file = examine(tmp_path, tmp_path / "f", cap=64)
    assert file is not None
    assert (file.rel, file.kind, file.size) == (b"f", kind, len(content))
    assert file.data == (content if kept else None)


def test_a_file_grown_since_its_status_is_read_on_to_the_cap(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(bytes(range(256)) * 1_000)  # 256,000 bytes
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:  # its status said 10 bytes: the read goes on, in pieces, to cap + 1
        assert _head(fd, 10, 200_000) == (bytes(range(256)) * 1_000)[:200_001]
    finally:
        os.close(fd)


def test_what_is_no_regular_file_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert examine(tmp_path, tmp_path / "d") is None
    assert examine(tmp_path, tmp_path / "gone") is None
