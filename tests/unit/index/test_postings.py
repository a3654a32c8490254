"""Posting lists of our own: a long pass's segments, and the documents a question finds in
them, checked against the plain way (each document's trigrams as a set)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tether.index import postings, shards
from tether.index.trigrams import numbered

_GRAMS = ["abc", "bcd", "zz_", "___", "999", "x_1", "q9z"]


def _shard(path: Path, segments: list[tuple[int, list[bytes | None]]]) -> sqlite3.Connection:
    """A database at ``path`` whose one shard (attached as g0, as the index attaches it)
    holds ``segments`` (first document, texts), each written as a worker writes one."""
    db = sqlite3.connect(path, isolation_level=None)
    shards.Attached(db, path).follow("t", 1)
    for first, texts in segments:
        numbers = [grams for _, grams in numbered(texts, lambda text: text)]
        postings.write(shards.path_of(path, "t", 0), first, postings.segment(numbers))
    return db


def _plain(texts: dict[int, bytes], branches: list[list[str]]) -> list[int]:
    def grams(text: bytes) -> set[str]:
        folded = text.lower()
        return {folded[i : i + 3].decode("latin-1") for i in range(len(folded) - 2)}

    return sorted(
        doc for doc, text in texts.items() if any(set(branch) <= grams(text) for branch in branches)
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.lists(st.sampled_from(_GRAMS), max_size=6).map(" ".join), max_size=12),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.lists(st.sampled_from(_GRAMS), min_size=1, max_size=3), min_size=1, max_size=3),
    st.randoms(use_true_random=False),
)
def test_a_question_finds_exactly_the_documents_holding_every_trigram_of_a_branch(
    tmp_path_factory: pytest.TempPathFactory,
    segments: list[list[str]],
    branches: list[list[str]],
    rng: random.Random,
) -> None:
    path = tmp_path_factory.mktemp("shard") / "index.sqlite3"
    placed: list[tuple[int, list[bytes | None]]] = []
    texts: dict[int, bytes] = {}
    first = 1
    for words in segments:
        batch: list[bytes | None] = [
            None if rng.random() < 0.1 else text.encode() for text in words
        ]
        placed.append((first, batch))
        texts.update((first + n, text) for n, text in enumerate(batch) if text is not None)
        first += len(batch) + rng.randrange(3)  # ids set aside and never used
    db = _shard(path, placed)
    try:
        assert postings.matching(db, ["g0"], branches) == _plain(texts, branches)
    finally:
        db.close()


def test_a_long_branch_is_asked_by_its_rarest_trigrams(tmp_path: Path) -> None:
    """Of a branch of more trigrams than ``RAREST``, the rarest are intersected: every
    document holding them all is found, and one lacking a rare one is not; one lacking
    only the most common may be (ripgrep's reading confirms)."""
    common = ["aaa", "bbb", "ccc"]  # in every document
    rare = [f"d{n:02}" for n in range(1, 13)]  # RAREST of them
    assert len(rare) == postings.RAREST
    texts: list[bytes | None] = [
        " ".join([*common, *rare]).encode(),  # 100: all of them
        " ".join([*common[:2], *rare]).encode(),  # 101: lacks a common one
        " ".join([*common, *rare[:-1]]).encode(),  # 102: lacks a rare one
        *(" ".join(common).encode() for _ in range(10)),
    ]
    db = _shard(tmp_path / "index.sqlite3", [(100, texts)])
    try:
        assert postings.matching(db, ["g0"], [[*common, *rare]]) == [100, 101]
        assert postings.matching(db, ["g0"], [["aaa", "zzz"]]) == []  # none holds "zzz"
        assert postings.matching(db, ["g0"], [["zzz"], ["d12"]]) == [100, 101]
    finally:
        db.close()


def test_a_pattern_of_many_alternatives_reads_every_offset_at_once(tmp_path: Path) -> None:
    """Past ``_WHOLE_HEAD_FROM`` trigrams asked, a segment's offsets are read whole: the
    same documents are found as the plain way finds."""
    words = [f"w{n:02}" for n in range(60)]
    segments: list[tuple[int, list[bytes | None]]] = [
        (1, [" ".join(words[n : n + 3]).encode() for n in range(0, 30)]),
        (40, [" ".join(words[n : n + 2]).encode() for n in range(25, 58)] + [None]),
    ]
    texts = {
        first + n: text
        for first, batch in segments
        for n, text in enumerate(batch)
        if text is not None
    }
    branches = [[word] for word in words[::2]] + [["w07", "w08"], ["w99"]]
    assert len({gram for branch in branches for gram in branch}) >= postings._WHOLE_HEAD_FROM
    db = _shard(tmp_path / "index.sqlite3", segments)
    try:
        assert postings.matching(db, ["g0"], branches) == _plain(texts, branches)
        assert postings.matching(db, ["g0"], []) == []
    finally:
        db.close()


def test_no_shard_no_documents_and_a_segment_has_a_bound() -> None:
    assert postings.matching(sqlite3.connect(":memory:"), [], [["abc"]]) == []
    assert postings.segment([None, None]) is None
    with pytest.raises(ValueError, match="at most"):
        postings.segment([None] * (postings.MAX_SEGMENT + 1))
