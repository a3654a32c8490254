"""Posting lists of our own: how a long pass's batches are kept in its shards.

A worker's batch of files (``workspace.WORKER_BATCH``) becomes one segment: for each
trigram (``trigrams.numbered``), the batch's files that hold it, in order. A segment is
one row of a shard's ``postings`` table, its id the segment's first document, its blob
the offset of each trigram's list (``SPACE + 1`` of them, ``uint32``) then the lists
(``uint16``: a document's place in its segment). A search reads, of each segment, the
offsets of its trigrams and then their lists (SQLite's incremental blob reads: only those
bytes), and intersects the lists with numpy.

Inserting the same trigrams into FTS5 was the longest part of a worker's time: 52-55 µs
a file of the bench's big tree, and 20 more to make its documents' text; making a
segment takes 7 (its stable sort 4), writing it 2. The big tree's first build took
4.7-5.4 s where it took 7.0-9.1 (old and new in turn, on a machine slower that day than
the bench's figures).
A question of these lists (the bench's four warm searches) takes 1.5-3.4 ms, a shard's
page of 64 KiB (``PAGE_BYTES``) keeping a blob's chain of pages short (a read at an offset
walks the chain up to it): with SQLite's 4 KiB pages it took 14-29 ms, as did a row for
each block of 256 trigrams of a segment instead of one a segment (6-15). FTS5 still
keeps the files read after (a change, a catch-up, a short pass: a few at a time, where its
inserts cost little) in the database's own ``grams``, searched beside these.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from struct import unpack
from typing import TYPE_CHECKING, cast

from tether.index.trigrams import SPACE, number, numpy_module

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

MAX_SEGMENT = 2**16  # files: a document's place in its segment is a uint16
TABLE = "postings(lists BLOB NOT NULL)"  # a row a segment, its id the segment's first document
PAGE_BYTES = 65536  # a shard's pages: a segment's blob (~1 MB) is a chain of few
_HEAD = 4 * (SPACE + 1)  # the offsets, before the lists
_WHOLE_HEAD_FROM = 32  # trigrams asked: a read of 8 bytes takes ~1 µs, of the offsets ~40
# Of a branch's trigrams, the lists of this many of the rarest are intersected: the
# candidates stay a superset (ripgrep confirms each). A list costs ~0.1 ms to read, a
# candidate ~16 µs of ripgrep's: with 6, "def __init__" (7 trigrams) had 8,212 candidates
# on the bench's big tree where all 7 give 8,050, "HeaderParseError" (14) 152 for 128.
RAREST = 12


def segment(numbers: Sequence[npt.NDArray[np.uint16] | None]) -> bytes | None:
    """The blob of a segment whose n-th document holds the trigrams ``numbers[n]`` (None:
    a file without a document); None when none holds any."""
    if len(numbers) > MAX_SEGMENT:
        raise ValueError(f"a segment holds at most {MAX_SEGMENT} files, not {len(numbers)}")
    numpy = numpy_module()
    held = [(n, grams) for n, grams in enumerate(numbers) if grams is not None and len(grams)]
    if not held:
        return None
    grams = numpy.concatenate([grams for _, grams in held])
    places = numpy.repeat(
        numpy.array([n for n, _ in held], dtype=numpy.uint16), [len(grams) for _, grams in held]
    )
    offsets = numpy.zeros(SPACE + 1, dtype="<u4")
    numpy.cumsum(numpy.bincount(grams, minlength=SPACE), out=offsets[1:])
    # A stable sort: each list in the documents' order.
    docs = places[numpy.argsort(grams, kind="stable")].astype("<u2")
    lists: bytes = offsets.tobytes() + docs.tobytes()
    return lists


def write(shard: Path, first: int, lists: bytes | None) -> None:
    """Insert a segment (its first document and blob) into the shard at ``shard``, in a
    transaction of its own connection (a worker's)."""
    if lists is None:
        return
    db = sqlite3.connect(shard, isolation_level=None, timeout=60)
    try:
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("INSERT INTO postings(rowid, lists) VALUES (?, ?)", (first, lists))
    finally:
        db.close()


def matching(
    db: sqlite3.Connection, schemas: Sequence[str], branches: list[list[str]]
) -> list[int]:
    """The documents in the ``postings`` of ``schemas`` that hold every trigram of some
    branch, ascending. Of each branch only the rarest trigrams are asked (``RAREST``):
    the lengths of every list are read first (two offsets each), then the lists of those.
    Only those bytes of a segment's blob are read."""
    numpy = numpy_module()
    segments = [
        (schema, first)
        for schema in schemas
        for (first,) in db.execute(f"SELECT rowid FROM {schema}.postings")
    ]
    if not segments:
        return []
    grams = sorted({number(gram) for branch in branches for gram in branch})
    if not grams:
        return []
    place = {gram: n for n, gram in enumerate(grams)}
    with contextlib.ExitStack() as opened:
        blobs = [
            opened.enter_context(db.blobopen("postings", "lists", first, name=schema))
            for schema, first in segments
        ]
        # Each segment's offsets of each trigram's list: where it starts, and ends.
        starts, ends = numpy.array([_spans(blob, grams) for blob in blobs]).transpose(2, 0, 1)
        lengths = (ends - starts).sum(axis=0).tolist()
        chosen = [
            sorted(asked, key=lambda n: lengths[n])[:RAREST]
            for asked in ({place[number(gram)] for gram in branch} for branch in branches)
            if all(lengths[n] for n in asked)  # else no document holds one of them
        ]
        firsts = [first for _, first in segments]
        lists = {n: _list(blobs, firsts, starts[:, n], ends[:, n]) for n in set().union(*chosen)}
    if not chosen:
        return []
    found = []
    for branch in chosen:
        counts = numpy.bincount(numpy.concatenate([lists[n] for n in branch]))
        found.append(numpy.flatnonzero(counts == len(branch)))
    held = found[0] if len(found) == 1 else numpy.unique(numpy.concatenate(found))
    held_by_some: list[int] = held.tolist()
    return held_by_some


def _spans(blob: sqlite3.Blob, grams: Sequence[int]) -> list[tuple[int, int]]:
    """Where each trigram's list starts and ends in a segment: its offsets read one pair
    at a time, or all at once for many trigrams (a pattern of many alternatives)."""
    if len(grams) < _WHOLE_HEAD_FROM:
        return [unpack("<II", _read(blob, 4 * gram, 8)) for gram in grams]
    offsets = numpy_module().frombuffer(_read(blob, 0, _HEAD), dtype="<u4")
    spans: list[tuple[int, int]] = list(
        zip(offsets[grams].tolist(), offsets[[g + 1 for g in grams]].tolist(), strict=True)
    )
    return spans


def _list(
    blobs: Sequence[sqlite3.Blob],
    firsts: Sequence[int],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
) -> npt.NDArray[np.uint32]:
    """The documents of one trigram's lists in every segment (``starts`` to ``ends``)."""
    numpy = numpy_module()
    parts, held, lengths = [], [], []
    for blob, first, start, end in zip(blobs, firsts, starts.tolist(), ends.tolist(), strict=True):
        if end > start:
            parts.append(_read(blob, _HEAD + 2 * start, 2 * (end - start)))
            held.append(first)
            lengths.append(end - start)
    places = numpy.frombuffer(b"".join(parts), dtype="<u2").astype(numpy.uint32)
    docs: npt.NDArray[np.uint32] = places + numpy.repeat(
        numpy.array(held, dtype=numpy.uint32), lengths
    )
    return docs


def _read(blob: sqlite3.Blob, start: int, size: int) -> bytes:
    # A slice of a Blob is bytes (typeshed says int: the type of an index).
    return cast(bytes, blob[start : start + size])
