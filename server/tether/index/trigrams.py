"""What the index keeps of a file: the distinct trigrams of its words.

A trigram here is three consecutive ASCII word characters (letters, digits, "_"), folded
to lower case: the only trigrams a search asks for (``literals``). A file's document is
its distinct trigrams, each a token of its own ("def __i _in ini ..."), which FTS5's
``ascii`` tokenizer takes as they are. FTS5's time goes by the tokens it is given: on the
bench's big tree (38,635 text files, 296 MB) its ``trigram`` tokenizer over each file's
distinct words took 12.3 s of CPU to insert, these documents 4.2-4.6 s.

They are found with numpy, a group of files at once: each byte becomes one of 38
"characters" (the 37 word characters, and one for every other byte, which no trigram
holds), each position the number of the trigram starting there (below 38³), and each
file sets those numbers in a bitmap of its own. Over that tree this took 2.0 s, where
taking the files' distinct words in Python (a set of each file's ``split``) took 3.1-3.5 s
before FTS5 even began. numpy is imported at the first use, not with the server: it
would add a tenth of a second to every start for what only a build or a change needs.
And it is imported without the thread a core its OpenBLAS starts as it loads (the soak
campaign saw the server's threads grow by one): the index multiplies no matrix.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

from tether.tools.environment import for_this_process

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

T = TypeVar("T")
D = TypeVar("D")
WORD = b"abcdefghijklmnopqrstuvwxyz0123456789_"
_OTHER = len(WORD)  # the "character" of every byte that is no word character
_BASE = len(WORD) + 1
SPACE = _BASE**3  # trigram numbers, those holding an _OTHER included
# Each byte's character (case folded): bytes.translate does it at memory speed.
_CHARACTERS = bytes(
    WORD.find(bytes([byte]).lower()) if bytes([byte]).lower() in WORD else _OTHER
    for byte in range(256)
)
_BETWEEN = b"\xff"  # joins a group's files: no trigram spans two of them
_GROUP_FILES = 20  # per bitmap (20 rows of 54,872 bytes); 10 or 40 took longer
_GROUP_BYTES = 4 * 2**20  # and at most this many bytes of text (the arrays are 2 bytes a byte)


def paired(items: Iterable[T], text: Callable[[T], bytes | None]) -> Iterator[tuple[T, str | None]]:
    """Each item with its ``text``'s document (None for an item without text): its
    distinct trigrams of word characters, lower case, a token each (separated by spaces,
    in no meaningful order). Taken a group at a time: only a group's texts are held."""
    return _grouped(items, text, _documents)


def numbered(
    items: Iterable[T], text: Callable[[T], bytes | None]
) -> Iterator[tuple[T, npt.NDArray[np.uint16] | None]]:
    """Each item with its ``text``'s distinct trigram numbers (``number``), ascending: what
    a long pass's posting lists are made of (``postings``)."""
    return _grouped(items, text, _numbers)


def document(text: bytes) -> str:
    return _documents([text])[0]


def number(gram: str) -> int:
    """The number of a trigram of word characters, as ``numbered`` gives it."""
    first, second, third = (WORD.index(char) for char in gram.lower().encode("ascii"))
    return (first * _BASE + second) * _BASE + third


def _grouped(
    items: Iterable[T],
    text: Callable[[T], bytes | None],
    form: Callable[[Sequence[bytes]], list[D]],
) -> Iterator[tuple[T, D | None]]:
    group: list[tuple[T, bytes | None]] = []
    size = 0
    for item in items:
        data = text(item)
        if group and (len(group) == _GROUP_FILES or size + len(data or b"") > _GROUP_BYTES):
            yield from _formed(group, form)
            group, size = [], 0
        group.append((item, data))
        size += len(data or b"")
    yield from _formed(group, form)


def _formed(
    group: Sequence[tuple[T, bytes | None]], form: Callable[[Sequence[bytes]], list[D]]
) -> Iterator[tuple[T, D | None]]:
    texts = [data for _, data in group if data is not None]
    found = iter(form(texts) if texts else [])
    for item, data in group:
        yield item, None if data is None else next(found)


def _documents(texts: Sequence[bytes]) -> list[str]:
    held, bounds = _held(texts)
    _, tokens = tables()
    joined = tokens[held % SPACE].tobytes().decode("ascii")
    return [joined[4 * bounds[n] : 4 * bounds[n + 1]] for n in range(len(texts))]


def _numbers(texts: Sequence[bytes]) -> list[npt.NDArray[np.uint16]]:
    held, bounds = _held(texts)
    numbers = (held % SPACE).astype(numpy_module().uint16)
    return [numbers[bounds[n] : bounds[n + 1]] for n in range(len(texts))]


def _held(texts: Sequence[bytes]) -> tuple[npt.NDArray[np.intp], list[int]]:
    """The texts' trigrams as one ascending array of ``n * SPACE + number`` (n: the
    text's place), and where each text's part of it starts (and the last one ends)."""
    np = numpy_module()
    valid, _ = tables()
    characters = np.frombuffer(_BETWEEN.join(texts).translate(_CHARACTERS), dtype=np.uint8)
    wide = characters.astype(np.uint16)  # 38³ = 54,872 fits
    numbers = wide[:-2] * _BASE**2
    numbers += wide[1:-1] * _BASE
    numbers += wide[2:]
    # As indices: numpy's scatter below converts any other type itself, three times slower.
    indices = numbers.astype(np.intp)
    seen = np.zeros((len(texts), SPACE), dtype=bool)
    start = 0
    for n, text in enumerate(texts):
        end = start + len(text)
        seen[n][indices[start : max(start, end - 2)]] = True  # a row: [n, ...] is slower
        start = end + len(_BETWEEN)
    seen &= valid
    held = np.flatnonzero(seen)
    bounds: list[int] = np.searchsorted(held, np.arange(len(texts) + 1) * SPACE).tolist()
    return held, bounds


@cache
def tables() -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.uint8]]:
    """Which trigram numbers hold no _OTHER, and each number's token ("abc ")."""
    np = numpy_module()
    numbers = np.arange(SPACE)
    characters = np.stack([numbers // _BASE**2, numbers // _BASE % _BASE, numbers % _BASE], 1)
    valid = np.all(characters < _OTHER, axis=1, keepdims=False)
    tokens = np.full((SPACE, 4), ord(" "), dtype=np.uint8)
    tokens[:, :3] = np.frombuffer(WORD + b" ", dtype=np.uint8)[characters]
    return valid, tokens


@cache
def numpy_module() -> ModuleType:
    with for_this_process(OPENBLAS_NUM_THREADS="1"):
        import numpy

    return numpy
