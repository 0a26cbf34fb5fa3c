"""The postings table: for each lexeme, the chunks holding it with their term frequency and BM25 length.

BM25 over a GIN index must read every candidate chunk's ``tsvector`` to learn its term frequencies,
and SQL sums per posting at about a microsecond each (a CISI question has ~30 terms and ~150,000
postings per 100,000 chunks). This table keeps what scoring needs per (lexeme, chunk) in compact
blocks that the store reads for the query's lexemes only and sums with numpy (see ``ranking``).

``postings_<index_id>``, one row per block::

    block    bigint    identity: concatenation order within a lexeme
    term     text      the lexeme
    dead     boolean   a tombstone block: rows of deleted chunks (only ``rows`` is set)
    high     integer   ``row_id >> 32``, the same for every entry of the block
    wide     boolean   lengths are uint32 (else uint16)
    size     integer   entries
    rows     bytea     uint32 big-endian, ``row_id & 0xFFFFFFFF``
    tfs      bytea     uint8, the term frequency minus one (a tsvector keeps at most 256 positions)
    lengths  bytea     uint16 or uint32 big-endian, the chunk's BM25 length (``term_count``)

Seven bytes per posting (the ``tsvector`` alone takes about twice that). Every column is an array of
fixed-width records, so blocks of one lexeme with the same ``(dead, high, wide)`` concatenate into a
valid block: merges are ``string_agg`` in SQL. Big-endian, so SQL can build blocks too
(``int8send`` and friends: the tombstones of deleted chunks and the v5 migration's backfill).

Writes append one block per lexeme and write call; deleting chunks appends tombstones, which
readers subtract until a purge rewrites the lexeme without them (``store._maintain_postings``).
Row ids are never reused, so a tombstone stays true until its posting is purged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import pairwise, repeat
from typing import Any

import numpy as np
import numpy.typing as npt

from runiq_postgresql.lexical import SlicePostings

__all__ = [
    "COLUMNS",
    "MAX_TF",
    "Blocks",
    "Gathered",
    "PostingsBuffer",
    "TermPostings",
    "decode",
    "gather",
    "joined",
    "purged",
]

MAX_TF = 256  # lexical.MAX_POSITIONS_PER_LEXEME: a tf fits one byte as tf - 1
_LOW = np.int64(0xFFFFFFFF)
_NARROW_MAX = 0xFFFF
_INT32_MAX = 2**31 - 1

_Ints = npt.NDArray[np.int64]


@dataclass(slots=True)
class Blocks:
    """New blocks as parallel lists, one entry per block; :meth:`records` gives them as rows for COPY."""

    terms: list[str] = field(default_factory=list)
    high: list[int] = field(default_factory=list)
    wide: list[bool] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)
    rows: list[bytes] = field(default_factory=list)
    tfs: list[bytes] = field(default_factory=list)
    lengths: list[bytes] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.terms)

    def records(self) -> Iterator[tuple[Any, ...]]:
        """The blocks as rows of :data:`COLUMNS`, for a binary COPY into the postings table (an iterator:
        COPY encodes each row as it comes, so ``zip`` reuses one tuple instead of allocating one per block)."""
        return zip(self.terms, repeat(False), self.high, self.wide, self.sizes, self.rows, self.tfs, self.lengths)


# What a live block's row holds, in the order of :meth:`Blocks.records` (``block`` is the table's identity).
COLUMNS = ("term", "dead", "high", "wide", "size", "rows", "tfs", "lengths")


def _encode(terms: Sequence[str], term_ids: _Ints, rows: _Ints, tfs: _Ints, lengths: _Ints) -> Blocks:
    """One block per (lexeme, high, wide); ``term_ids`` index ``terms`` and group the postings."""
    high, wide = rows >> 32, lengths > _NARROW_MAX
    mixed = high.any() or wide.any()
    order = np.lexsort((wide, high, term_ids)) if mixed else np.argsort(term_ids, kind="stable")
    term_ids, rows, tfs, lengths, high = (a[order] for a in (term_ids, rows, tfs, lengths, high))
    wide = wide[order]
    cuts = np.flatnonzero((np.diff(term_ids) != 0) | (np.diff(high) != 0) | (np.diff(wide) != 0)) + 1
    bounds = [0, *cuts.tolist(), len(rows)]
    row_bytes = (rows & _LOW).astype(">u4").tobytes()
    tf_bytes = (tfs - 1).astype(np.uint8).tobytes()
    narrow = lengths.astype(">u2").tobytes()
    wide_bytes = lengths.astype(">u4").tobytes() if wide.any() else b""
    firsts = bounds[:-1]
    is_wide = wide[firsts].tolist()
    spans = list(pairwise(bounds))
    return Blocks(
        terms=[terms[i] for i in term_ids[firsts].tolist()],
        high=high[firsts].tolist(),
        wide=is_wide,
        sizes=np.diff(bounds).tolist(),
        rows=[row_bytes[4 * start : 4 * stop] for start, stop in spans],
        tfs=[tf_bytes[start:stop] for start, stop in spans],
        lengths=[
            wide_bytes[4 * start : 4 * stop] if w else narrow[2 * start : 2 * stop]
            for (start, stop), w in zip(spans, is_wide, strict=True)
        ],
    )


class PostingsBuffer:
    """The postings of one write call, gathered run by run and written as one block per lexeme."""

    def __init__(self) -> None:
        self._runs: list[tuple[list[str], _Ints, _Ints, _Ints, _Ints]] = []

    def add(self, postings: SlicePostings, row_ids: Sequence[int], lengths: Sequence[int]) -> None:
        """A run's postings; ``row_ids`` and ``lengths`` are its chunks' (``postings.chunks`` indexes them)."""
        ids = np.asarray(row_ids, dtype=np.int64)
        lens = np.asarray(lengths, dtype=np.int64)
        counts = np.diff(postings.starts)
        self._runs.append(
            (postings.terms, counts, ids[postings.chunks], postings.tfs.astype(np.int64), lens[postings.chunks])
        )

    @property
    def terms(self) -> list[str]:
        """Every lexeme written, once."""
        return list(dict.fromkeys(term for run in self._runs for term in run[0]))

    def blocks(self) -> Blocks:
        number: dict[str, int] = {}
        term_ids: list[_Ints] = []
        for terms, counts, *_ in self._runs:
            ids = np.fromiter((number.setdefault(t, len(number)) for t in terms), dtype=np.int64, count=len(terms))
            term_ids.append(np.repeat(ids, counts))
        if not number:
            return Blocks()
        columns = [np.concatenate([run[i] for run in self._runs]) for i in (2, 3, 4)]
        return _encode(list(number), np.concatenate(term_ids), *columns)


@dataclass(slots=True)
class TermPostings:
    """One lexeme's postings as read in one snapshot, decoded: the live postings' row ids (``high``
    applied; int32 while they fit), term frequencies minus one (as stored) and BM25 lengths (native
    unsigned integers), and the rows its tombstones name.

    ``memo`` is the scorer's: the lexeme's BM25 contributions for the statistics they were computed
    with (see ``ranking``), kept only while ``memoise`` says there is room (8 bytes a posting).
    """

    rows: npt.NDArray[np.signedinteger[Any]]
    tfs: npt.NDArray[np.uint8]
    lengths: npt.NDArray[np.unsignedinteger[Any]]
    dead: _Ints
    memo: tuple[Any, npt.NDArray[np.float64]] | None = None
    memoise: bool = True
    bounds: tuple[int, int] = field(init=False)  # the least and greatest live row id ((0, -1) when none)

    def __post_init__(self) -> None:
        self.bounds = (int(self.rows.min()), int(self.rows.max())) if len(self.rows) else (0, -1)
        if self.rows.dtype != np.int32 and self.bounds[1] <= _INT32_MAX:
            self.rows = self.rows.astype(np.int32)

    @property
    def nbytes(self) -> int:
        """Bytes its arrays hold, and the memo's when it may be kept."""
        arrays = (self.rows, self.tfs, self.lengths, self.dead)
        return sum(a.nbytes for a in arrays) + (8 * len(self.rows) if self.memoise else 0)


def decode(blocks: Sequence[Any]) -> TermPostings:
    """One lexeme's blocks (records with the table's columns; live blocks and tombstones, any order)."""
    live = [block for block in blocks if not block["dead"]]
    tfs = np.frombuffer(b"".join(block["tfs"] for block in live), dtype=np.uint8)
    return TermPostings(_rows(live), tfs, _lengths(live), _rows([block for block in blocks if block["dead"]]))


def joined(parts: Sequence[TermPostings]) -> TermPostings:
    """Postings of one lexeme from several reads (blocks already held and blocks read now), concatenated."""
    if len(parts) == 1:
        return parts[0]
    return TermPostings(
        np.concatenate([p.rows for p in parts]),
        np.concatenate([p.tfs for p in parts]),
        np.concatenate([p.lengths for p in parts]),
        np.concatenate([p.dead for p in parts]),
    )


@dataclass(frozen=True, slots=True)
class Gathered:
    """Postings of some lexemes, lexeme after lexeme in query order (``terms[i]`` has ``postings[i]``),
    and ``dead``: the rows tombstoned in any lexeme read (deleted chunks, whose postings may still be
    in the blocks).

    The flat views (``starts``, ``rows``, ``tfs`` as float64 term frequencies, ``lengths``) concatenate
    the lexemes' arrays on each access.
    """

    terms: list[str]
    postings: list[TermPostings]
    dead: _Ints

    @property
    def starts(self) -> list[int]:
        starts = [0]
        for p in self.postings:
            starts.append(starts[-1] + len(p.rows))
        return starts

    @property
    def rows(self) -> _Ints:
        return _joined([p.rows.astype(np.int64) for p in self.postings], np.int64)

    @property
    def tfs(self) -> npt.NDArray[np.float64]:
        tfs: npt.NDArray[np.float64] = np.add(_joined([p.tfs for p in self.postings], np.uint8), 1.0)
        return tfs

    @property
    def lengths(self) -> npt.NDArray[np.unsignedinteger[Any]]:
        return _joined([p.lengths for p in self.postings], np.uint16)


def _joined(arrays: list[npt.NDArray[Any]], empty: type[np.generic]) -> npt.NDArray[Any]:
    return np.concatenate(arrays) if arrays else np.empty(0, dtype=empty)


def _rows(blocks: Sequence[Any]) -> _Ints:
    """The blocks' row ids, in order: the stored low halves plus ``high << 32`` where a block has one."""
    rows = np.frombuffer(b"".join(block["rows"] for block in blocks), dtype=">u4").astype(np.int64)
    if any(block["high"] for block in blocks):
        highs = [int(block["high"]) << 32 for block in blocks]
        rows += np.repeat(np.array(highs, dtype=np.int64), [len(block["rows"]) // 4 for block in blocks])
    return rows


def _lengths(blocks: Sequence[Any]) -> npt.NDArray[np.unsignedinteger[Any]]:
    if not any(block["wide"] for block in blocks):
        return np.frombuffer(b"".join(block["lengths"] for block in blocks), dtype=">u2").astype(np.uint16)
    parts = [np.frombuffer(block["lengths"], dtype=">u4" if block["wide"] else ">u2") for block in blocks]
    return np.concatenate(parts).astype(np.uint32)


def gather(blocks: Iterable[Any], terms: Sequence[str]) -> Gathered:
    """The blocks read for ``terms`` (records with the table's columns), decoded in ``terms`` order."""
    by_term: dict[str, list[Any]] = {}
    for block in blocks:
        by_term.setdefault(block["term"], []).append(block)
    read = {term: decode(own) for term, own in by_term.items()}
    return gathered(read, [term for term in terms if term in read and len(read[term].rows)])


def gathered(read: Mapping[str, TermPostings], terms: Sequence[str]) -> Gathered:
    """``terms`` (each in ``read``) in that order, with the rows tombstoned in any lexeme of ``read``."""
    dead = [p.dead for p in read.values() if len(p.dead)]
    return Gathered(list(terms), [read[term] for term in terms], _joined(dead, np.int64))


def purged(blocks: Sequence[Any]) -> Blocks:
    """The lexemes' blocks rewritten without their tombstoned postings, and without the tombstones."""
    by_term: dict[str, list[Any]] = {}
    for block in blocks:
        by_term.setdefault(block["term"], []).append(block)
    terms: list[str] = []
    columns: list[list[_Ints]] = [[], [], [], []]
    for term, own in by_term.items():
        postings = decode(own)
        keep = ~np.isin(postings.rows, postings.dead)
        if not keep.any():
            continue
        columns[0].append(np.full(int(keep.sum()), len(terms), dtype=np.int64))
        columns[1].append(postings.rows[keep])
        columns[2].append(postings.tfs[keep].astype(np.int64) + 1)
        columns[3].append(postings.lengths[keep].astype(np.int64))
        terms.append(term)
    if not terms:
        return Blocks()
    return _encode(terms, *(np.concatenate(c) for c in columns))
