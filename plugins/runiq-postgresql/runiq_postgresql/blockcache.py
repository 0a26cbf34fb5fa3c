"""Postings a store has read, kept decoded per lexeme so the next query neither reads nor decodes them again.

A block row is never updated: writes append blocks, deletions append tombstone blocks, and purges
and merges delete blocks and insert new ones with new ids. So a block id names one content for as
long as the table exists, and a cached block never needs invalidating; the postings table's oid is
part of the key, so a table dropped and created again is a different cache. A query sends the ids
it holds for its terms and the server lists them without their columns (``IndexSql.read_blocks``);
blocks that no longer exist are simply not listed, and drop out when the lexeme is assembled again.

An entry is one lexeme's postings decoded (:class:`~runiq_postgresql.postings.TermPostings`: row ids,
term frequencies, lengths, tombstoned rows) with the slice each block fills, so a lexeme whose
blocks are the same as last time costs a lookup, and one with new blocks decodes only those. The
ranking remembers the lexeme's BM25 contributions on the entry until the statistics change.
Least recently used lexemes leave past the budget.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from runiq_postgresql.postings import TermPostings, decode, joined

__all__ = ["BLOCK_CACHE_BYTES", "BlockCache", "BlockRow", "HeldTerm"]

BLOCK_CACHE_BYTES = 256 << 20  # per store; CISI repeated to 100k chunks: 6.7M postings, ~110 MB here with contributions
_ENTRY_OVERHEAD = 400  # bytes a cached lexeme costs besides its arrays (entry, arrays' headers, key)
_BLOCK_OVERHEAD = 100  # and per block (its slice)

_Key = tuple[int, str]  # (postings table oid, lexeme)
_Slice = tuple[bool, int, int]  # (tombstone, start, stop) in the rows or dead array


class BlockRow(Protocol):
    """A block read by column name: an ``asyncpg.Record`` (not a ``Mapping``: it iterates values) or a dict."""

    def __getitem__(self, column: str, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class HeldTerm:
    """A lexeme's cached postings and where each of its blocks lies in them."""

    postings: TermPostings
    blocks: dict[int, _Slice]

    @property
    def size(self) -> int:
        return _ENTRY_OVERHEAD + _BLOCK_OVERHEAD * len(self.blocks) + self.postings.nbytes


class BlockCache:
    def __init__(self, budget: int = BLOCK_CACHE_BYTES) -> None:
        self._budget = budget
        self._terms: OrderedDict[_Key, HeldTerm] = OrderedDict()
        self._bytes = 0

    @property
    def size(self) -> int:
        """Bytes held (arrays and an estimate of the per-lexeme and per-block overhead)."""
        return self._bytes

    def held(self, relation: int, terms: Iterable[str]) -> dict[str, HeldTerm]:
        """The cached lexemes among ``terms``; the caller keeps them whatever is evicted meanwhile."""
        out: dict[str, HeldTerm] = {}
        for term in terms:
            entry = self._terms.get((relation, term))
            if entry is not None:
                self._terms.move_to_end((relation, term))
                out[term] = entry
        return out

    def assemble(
        self, relation: int, term: str, ids: Sequence[int], fresh: Sequence[BlockRow], held: HeldTerm | None
    ) -> TermPostings:
        """The lexeme's postings in the snapshot that listed ``ids`` (every block of the lexeme): the blocks
        of ``held`` still listed and ``fresh``, the listed blocks read in full (those not held); remembered
        for the next query."""
        known = {} if held is None else held.blocks
        if held is not None and len(ids) == len(known) and all(i in known for i in ids):
            return held.postings
        kept = [i for i in ids if i in known]  # held blocks still in the lexeme
        if len(kept) + len(fresh) != len(ids):
            raise ValueError("a listed block is neither held nor read")  # a caller's bug
        slices: dict[int, _Slice] = {}
        parts = [_kept(held.postings, [(i, known[i]) for i in kept], slices)] if held is not None and kept else []
        if fresh:
            parts.append(_decoded(fresh, slices, parts[0] if parts else None))
        postings = joined(parts)
        self._put((relation, term), HeldTerm(postings, slices))
        return postings

    def _put(self, key: _Key, entry: HeldTerm) -> None:
        old = self._terms.pop(key, None)
        if old is not None:
            self._bytes -= old.size
        if self._bytes + entry.size > self._budget:
            entry.postings.memoise = False  # the postings before their contributions, when room runs short
        if entry.size > self._budget:
            return
        self._terms[key] = entry
        self._bytes += entry.size
        while self._bytes > self._budget:
            _, evicted = self._terms.popitem(last=False)
            self._bytes -= evicted.size


def _kept(postings: TermPostings, blocks: list[tuple[int, _Slice]], slices: dict[int, _Slice]) -> TermPostings:
    """The postings of the held blocks still in the lexeme, recording where each lies in them."""
    parts: dict[bool, list[tuple[int, int]]] = {False: [], True: []}
    at = {False: 0, True: 0}
    for block, (dead, start, stop) in blocks:
        parts[dead].append((start, stop))
        slices[block] = (dead, at[dead], at[dead] + stop - start)
        at[dead] += stop - start
    live = parts[False]
    return TermPostings(
        _cut(postings.rows, live),
        _cut(postings.tfs, live),
        _cut(postings.lengths, live),
        _cut(postings.dead, parts[True]),
    )


def _cut(array: npt.NDArray[Any], spans: list[tuple[int, int]]) -> npt.NDArray[Any]:
    """The spans of ``array``, copied (a view would keep the whole replaced array alive)."""
    if spans == [(0, len(array))]:
        return array
    return np.concatenate([array[start:stop] for start, stop in spans]) if spans else array[:0].copy()


def _decoded(fresh: Sequence[BlockRow], slices: dict[int, _Slice], before: TermPostings | None) -> TermPostings:
    """The blocks read now, decoded, recording where each lies after the ``before`` postings (``decode``
    puts live blocks first, then tombstones, each in the order given)."""
    at = {False: 0 if before is None else len(before.rows), True: 0 if before is None else len(before.dead)}
    for dead in (False, True):
        for block in fresh:
            if bool(block["dead"]) is dead:
                width = len(block["rows"]) // 4
                slices[int(block["block"])] = (dead, at[dead], at[dead] + width)
                at[dead] += width
    return decode(fresh)
