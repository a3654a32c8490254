"""What the index keeps of a file: the distinct trigrams of its words."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.index import trigrams
from tether.index.trigrams import document, number, numbered, paired


def _reference(data: bytes) -> set[str]:
    """The same, the plain way: every three word characters in a row, lower case."""
    runs = re.findall(rb"[A-Za-z0-9_]{3,}", data)
    return {run[i : i + 3].decode().lower() for run in runs for i in range(len(run) - 2)}


def test_a_files_trigrams_are_those_of_its_ascii_word_runs_lower_case() -> None:
    data = "def f(x): return Foo_Bar; é naïve Ωmega 12 123\0abc".encode()
    # "naïve" has no run of three: "na" and "ve"; "Ωmega" keeps its ASCII run.
    expected = "def ret etu tur urn foo oo_ o_b _ba bar meg ega 123 abc"
    assert sorted(document(data).split()) == sorted(expected.split())
    assert sorted(document(b"\xff\xfeabc\xc3(xyz").split()) == ["abc", "xyz"]  # not UTF-8
    assert document(b"") == "" and document(b"ab") == ""


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200) | st.text(alphabet="abAB_1 \n\xe9", max_size=200).map(str.encode))
def test_a_document_holds_exactly_the_trigrams_of_the_words(data: bytes) -> None:
    assert set(document(data).split()) == _reference(data)
    assert len(document(data).split()) == len(_reference(data))  # each once


def test_files_taken_together_keep_their_own_trigrams_none_across_them() -> None:
    # More files than a group, and a file past a group's bytes: each still its own.
    texts: list[bytes | None] = [f"file{n} ab".encode() for n in range(45)]
    texts[7] = None  # no text: no document
    texts[30] = b"xy" + b"z" * trigrams._GROUP_BYTES
    texts[31] = b"zq"  # "zzq" would span texts[30] and this one
    found = list(paired(range(len(texts)), texts.__getitem__))
    assert [n for n, _ in found] == list(range(len(texts)))
    for n, kept in found:
        data = texts[n]
        assert (kept is None) == (data is None)
        if data is not None and kept is not None:
            assert set(kept.split()) == _reference(data)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.binary(max_size=80) | st.none(), max_size=30))
def test_a_texts_trigram_numbers_are_its_documents_trigrams_ascending(
    texts: list[bytes | None],
) -> None:
    """What a long pass's posting lists are made of: the same trigrams as a document's,
    each once, in ascending order of their numbers."""
    for (n, numbers), (m, kept) in zip(
        numbered(range(len(texts)), texts.__getitem__),
        paired(range(len(texts)), texts.__getitem__),
        strict=True,
    ):
        assert n == m
        assert (numbers is None) == (kept is None)
        if numbers is not None and kept is not None:
            assert numbers.tolist() == sorted(number(gram) for gram in kept.split())


def test_a_trigrams_number_folds_case_and_tells_every_trigram_apart() -> None:
    grams = [a + b + c for a in "az_09" for b in "bY_" for c in "c5_"]
    assert number("AbC") == number("abc")
    assert len({number(gram) for gram in grams}) == len(grams)
    assert all(0 <= number(gram) < trigrams.SPACE for gram in grams)


def test_the_server_starts_without_numpy_which_only_reading_files_needs() -> None:
    """numpy's import is a tenth of a second of every start: only a build or a change
    that reads files imports it."""
    probe = (
        "import sys, tether.cli, tether.lsp.server, tether.index.workspace, tether.index.reads;"
        "assert 'numpy' not in sys.modules, 'numpy imported at start';"
        "from tether.index.trigrams import document; document(b'abc');"
        "assert 'numpy' in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads counted in /proc")
def test_numpy_is_imported_without_a_thread_pool_and_the_environment_is_left_as_it_was() -> None:
    """numpy's OpenBLAS starts a thread a core as it loads: the soak campaign saw the
    server's threads grow by one the first time the index read a file."""
    probe = (
        "import os; threads = lambda: len(os.listdir('/proc/self/task'));"
        "before = threads();"
        "from tether.index.trigrams import document; document(b'abc');"
        "import numpy; assert threads() == before, (before, threads());"
        "assert 'OPENBLAS_NUM_THREADS' not in os.environ"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
