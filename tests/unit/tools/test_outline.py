from __future__ import annotations

from pathlib import Path

import pytest
from tree_sitter import Language, Tree

from tests.unit.tools import Buffers, bytes_name, call, context, fifo, summary, write
from tether.errors import ToolError
from tether.tools import parsing, syntax_trees
from tether.tools.outline import Outline
from tether.tools.text import ON_LOOP_BYTES

OUTLINE = Outline()

PYTHON = """\
import os


@dataclass
class Store:
    path: str

    def load(self):
        def helper():
            pass
        return helper

    async def save(self):
        pass

    class Error(Exception):
        pass


def main():
    f = lambda: 1
"""

JAVASCRIPT = """\
export class Client extends Base {
  constructor(url) {
    this.url = url;
  }
  static create() { return new Client(); }
  get ready() { return true; }
  onClick = () => {
    this.fire();
  };
}

function connect() {}

const retry = async () => {
  setTimeout(() => {}, 10);
};

describe("client", () => {
  function inTest() {}
});
"""

TYPESCRIPT = """\
export interface Options {
  url: string;
}
type Id = string;
enum Color { Red, Green }
export abstract class Repo<T> {
  abstract find(id: Id): T;
  count(): number {
    return 0;
  }
}
namespace Util {
  export function pad(s: string): string { return s; }
}
export const twice = (n: number): number => n * 2;
"""

TSX = """\
import React from "react";

export function App(): JSX.Element {
  return <div>hello</div>;
}

class Panel extends React.Component {
  render() {
    return <span />;
  }
}
"""

GO = """\
package store

type Store struct {
	path string
}

type Reader interface {
	Read() error
}

func (s *Store) Load() error {
	return nil
}

func New(path string) *Store {
	return &Store{path: path}
}
"""

RUST = """\
pub struct Point {
    x: i32,
}

enum Shape { Circle, Square }

trait Area {
    fn area(&self) -> f64;
}

impl Area for Point {
    fn area(&self) -> f64 {
        0.0
    }
}

impl Point {
    pub fn new() -> Self { Point { x: 0 } }
}

fn main() {}
"""

CASES = {
    "store.py": (
        PYTHON,
        """\
class Store  (lines 4-17)
  def load  (lines 8-11)
  async def save  (lines 13-14)
  class Error  (lines 16-17)
def main  (lines 20-21)""",
    ),
    "client.mjs": (
        JAVASCRIPT,
        """\
class Client  (lines 1-10)
  method constructor  (lines 2-4)
  static method create  (line 5)
  get ready  (line 6)
  method onClick  (lines 7-9)
function connect  (line 12)
function retry  (lines 14-16)""",
    ),
    "repo.ts": (
        TYPESCRIPT,
        """\
interface Options  (lines 1-3)
type Id  (line 4)
enum Color  (line 5)
abstract class Repo  (lines 6-11)
  abstract method find  (line 7)
  method count  (lines 8-10)
namespace Util  (lines 12-14)
  function pad  (line 13)
function twice  (line 15)""",
    ),
    "app.tsx": (
        TSX,
        """\
function App  (lines 3-5)
class Panel  (lines 7-11)
  method render  (lines 8-10)""",
    ),
    "store.go": (
        GO,
        """\
type Store struct  (lines 3-5)
type Reader interface  (lines 7-9)
func (s *Store) Load  (lines 11-13)
func New  (lines 15-17)""",
    ),
    "point.rs": (
        RUST,
        """\
struct Point  (lines 1-3)
enum Shape  (line 5)
trait Area  (lines 7-9)
  fn area  (line 8)
impl Area for Point  (lines 11-15)
  fn area  (lines 12-14)
impl Point  (lines 17-19)
  fn new  (line 18)
fn main  (line 21)""",
    ),
}


@pytest.mark.parametrize("name", list(CASES))
async def test_outline_of_each_language(tmp_path: Path, name: str) -> None:
    source, expected = CASES[name]
    write(tmp_path, name, source)
    assert await call(OUTLINE, context(tmp_path), path=name) == expected


async def test_unsaved_text_is_outlined(tmp_path: Path) -> None:
    path = write(tmp_path, "m.py", "def old():\n    pass\n").resolve()
    ctx = context(tmp_path, Buffers({path: "\n\ndef new():\n    pass\n"}))
    assert await call(OUTLINE, ctx, path="m.py") == "def new  (lines 3-4)"


async def test_unsupported_languages_are_refused_with_the_supported_list(tmp_path: Path) -> None:
    write(tmp_path, "notes.md", "# hi\n")
    with pytest.raises(ToolError, match=r"notes.md's language; it reads .py, .pyi, .js.*\.rs"):
        await call(OUTLINE, context(tmp_path), path="notes.md")


async def test_a_file_with_no_definitions_says_so(tmp_path: Path) -> None:
    write(tmp_path, "consts.py", "X = 1\n")
    assert await call(OUTLINE, context(tmp_path), path="consts.py") == (
        "consts.py defines no functions or classes"
    )


async def test_syntax_errors_are_noted(tmp_path: Path) -> None:
    write(tmp_path, "broken.py", "def ok():\n    pass\n\ndef broken(:\n")
    out = await call(OUTLINE, context(tmp_path), path="broken.py")
    assert out.startswith("def ok  (lines 1-2)")
    assert out.endswith("[the file has syntax errors; the outline may be incomplete]")


async def test_missing_and_binary_files_are_errors(tmp_path: Path) -> None:
    write(tmp_path, "blob.py", b"\x00\x01")
    with pytest.raises(ToolError, match=r"no such file: gone.py"):
        await call(OUTLINE, context(tmp_path), path="gone.py")
    with pytest.raises(ToolError, match=r"blob.py is a binary file"):
        await call(OUTLINE, context(tmp_path), path="blob.py")


def test_summary(tmp_path: Path) -> None:
    assert summary(OUTLINE, context(tmp_path), path="src/a.rs") == "outline src/a.rs"


@pytest.mark.timeout(10)
async def test_a_fifo_is_refused_promptly(tmp_path: Path) -> None:
    fifo(tmp_path, "pipe.py")
    with pytest.raises(ToolError, match=r"pipe.py is a FIFO \(named pipe\); only regular files"):
        await call(OUTLINE, context(tmp_path), path="pipe.py")


async def test_a_name_that_is_not_utf8_is_outlined_by_its_escaped_name(tmp_path: Path) -> None:
    bytes_name(tmp_path, b"mod\xe9.py", b"def f():\n    pass\n")
    bytes_name(tmp_path, b"none\xe9.py", b"X = 1\n")
    ctx = context(tmp_path)
    assert await call(OUTLINE, ctx, path="mod\\xe9.py") == "def f  (lines 1-2)"
    assert await call(OUTLINE, ctx, path="none\\xe9.py") == (
        "none\\xe9.py defines no functions or classes"
    )


async def test_unsaved_text_with_a_lone_surrogate_is_outlined(tmp_path: Path) -> None:
    path = context(tmp_path).workspace / "m.py"
    ctx = context(tmp_path, Buffers({path: "def f():\n    return '\ud800'\n"}))
    assert await call(OUTLINE, ctx, path="m.py") == "def f  (lines 1-2)"


async def test_a_text_outlined_before_is_not_parsed_again_and_an_edit_is_parsed_as_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[tuple[bytes, bool]] = []  # each parse: its text, and whether from an old tree

    def counting(language: Language, data: bytes, old_tree: Tree | None = None) -> Tree:
        parsed.append((data, old_tree is not None))
        return parsing.parse(language, data, old_tree)

    monkeypatch.setattr(syntax_trees, "parse", counting)
    path = write(tmp_path, "m.py", "def f():\n    pass\n").resolve()
    buffers = Buffers()
    ctx = context(tmp_path, buffers)
    assert await call(OUTLINE, ctx, path="m.py") == "def f  (lines 1-2)"
    assert await call(OUTLINE, ctx, path="m.py") == "def f  (lines 1-2)"
    assert [incremental for _, incremental in parsed] == [False]
    buffers.texts[path] = "def f():\n    pass\n\nclass G:\n    pass\n"  # an unsaved edit
    assert await call(OUTLINE, ctx, path="m.py") == "def f  (lines 1-2)\nclass G  (lines 4-5)"
    del buffers.texts[path]  # the edit undone: the disk's text again
    assert await call(OUTLINE, ctx, path="m.py") == "def f  (lines 1-2)"
    assert [incremental for _, incremental in parsed] == [False, True, True]


@pytest.mark.timeout(5)
async def test_a_text_made_to_be_slow_to_parse_is_given_up_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1 MB of "x!" takes tree-sitter's JavaScript parser ~20 s, holding the GIL: the
    whole server waited on one outline. Asked again for the same text, it is not parsed."""
    monkeypatch.setattr(parsing, "PARSE_BASE_S", 0.1)
    monkeypatch.setattr(parsing, "PARSE_S_PER_BYTE", 0)
    parsed: list[int] = []

    def counting(language: Language, data: bytes, old_tree: Tree | None = None) -> Tree:
        parsed.append(len(data))
        return parsing.parse(language, data, old_tree)

    monkeypatch.setattr(syntax_trees, "parse", counting)
    write(tmp_path, "slow.js", "x = 1\n" + "x!" * 500_000)
    write(tmp_path, "fine.js", "function go() {}\n")
    ctx = context(tmp_path)
    for _ in range(2):
        with pytest.raises(
            ToolError,
            match=r"^outline gave up on slow.js: its parse took longer than 0.1 s; fs-read",
        ):
            await call(OUTLINE, ctx, path="slow.js")
    assert len(parsed) == 1
    assert await call(OUTLINE, ctx, path="fine.js") == "function go  (line 1)"


async def test_a_file_nested_thousands_deep_is_outlined(tmp_path: Path) -> None:
    """Valid Python 20,000 parentheses deep: the walk of its tree once recursed, and failed
    with RecursionError (found by the parse-fuzz campaign, seed 20261201)."""
    deep = "x = " + "(" * 20_000 + "1" + ")" * 20_000 + "\n"
    write(tmp_path, "deep.py", deep + "class After:\n    def m(self):\n        pass\n")
    assert await call(OUTLINE, context(tmp_path), path="deep.py") == (
        "class After  (lines 2-4)\n  def m  (lines 3-4)"
    )


async def test_a_text_outlined_before_is_told_on_the_loop(
    tmp_path: Path, threaded: list[str]
) -> None:
    """A comparison with the text kept, no parse and no hop to a thread; a changed text,
    or one too long to compare on the loop, is outlined in a thread."""
    write(tmp_path, "m.py", PYTHON)
    ctx = context(tmp_path)
    first = await call(OUTLINE, ctx, path="m.py")
    assert threaded == ["_outline"]  # its file read on the loop: it is small
    threaded.clear()

    assert await call(OUTLINE, ctx, path="m.py") == first
    assert threaded == []

    write(tmp_path, "m.py", PYTHON + "\ndef added():\n    pass\n")
    assert "def added  (lines" in await call(OUTLINE, ctx, path="m.py")
    assert threaded == ["_outline"]

    long = PYTHON + "#" * ON_LOOP_BYTES
    buffers = Buffers({(tmp_path / "m.py").resolve(): long})
    ctx = context(tmp_path, documents=buffers)
    await call(OUTLINE, ctx, path="m.py")
    threaded.clear()
    await call(OUTLINE, ctx, path="m.py")
    assert threaded == ["_outline"]  # kept, but not compared on the loop
