"""How the index names a file: its workspace-relative path, "/"-separated, as bytes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.index.reading import absolute, relative


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
