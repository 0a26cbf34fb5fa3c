"""Postings blocks a store has read, kept in memory so the next query does not read them again.

A block row is never updated: writes append blocks, deletions append tombstone blocks, and purges
and merges delete blocks and insert new ones with new ids. So a block id names one content for as
long as the table exists, and a cached block never needs invalidating; the postings table's oid is
part of the key, so a table dropped and created again is a different cache. A query sends the ids
it holds for its terms and the server leaves their columns out (``IndexSql.read_blocks``); blocks
that no longer exist are simply not returned, and age out of the cache.

Entries are the blocks' stored bytes (7 bytes a posting), least recently used out past the budget.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

__all__ = ["BLOCK_CACHE_BYTES", "BlockCache", "BlockRow"]

BLOCK_CACHE_BYTES = 256 << 20  # per store; CISI repeated to 100k chunks holds 47 MB of postings
_ENTRY_OVERHEAD = 200  # bytes a cached block costs besides its data (dict, bytes headers, key)

_Key = tuple[int, int]  # (postings table oid, block id)


class BlockRow(Protocol):
    """A block read by column name: an ``asyncpg.Record`` (not a ``Mapping``: it iterates values) or a dict."""

    def __getitem__(self, column: str, /) -> Any: ...


def _size(block: Mapping[str, Any]) -> int:
    return _ENTRY_OVERHEAD + sum(len(block[c]) for c in ("rows", "tfs", "lengths") if block[c] is not None)


class BlockCache:
    def __init__(self, budget: int = BLOCK_CACHE_BYTES) -> None:
        self._budget = budget
        self._blocks: OrderedDict[_Key, dict[str, Any]] = OrderedDict()
        self._by_term: dict[tuple[int, str], set[int]] = {}
        self._bytes = 0

    @property
    def size(self) -> int:
        """Bytes held (data and an estimate of the per-block overhead)."""
        return self._bytes

    def held(self, relation: int, terms: Iterable[str]) -> dict[int, dict[str, Any]]:
        """The cached blocks of ``terms`` by block id; the caller keeps them whatever is evicted meanwhile."""
        out: dict[int, dict[str, Any]] = {}
        for term in terms:
            for block in self._by_term.get((relation, term), ()):
                key = (relation, block)
                self._blocks.move_to_end(key)
                out[block] = self._blocks[key]
        return out

    def add(self, relation: int, block: BlockRow) -> dict[str, Any]:
        """Remember a block read in full (a record with the table's columns and ``block``)."""
        entry = {c: block[c] for c in ("term", "dead", "high", "wide", "rows", "tfs", "lengths")}
        key = (relation, int(block["block"]))
        size = _size(entry)
        if size > self._budget or key in self._blocks:
            return entry
        self._blocks[key] = entry
        self._by_term.setdefault((relation, entry["term"]), set()).add(key[1])
        self._bytes += size
        while self._bytes > self._budget:
            self._evict()
        return entry

    def _evict(self) -> None:
        (relation, block), entry = self._blocks.popitem(last=False)
        self._bytes -= _size(entry)
        ids = self._by_term[(relation, entry["term"])]
        ids.discard(block)
        if not ids:
            del self._by_term[(relation, entry["term"])]
