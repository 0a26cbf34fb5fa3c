"""Reciprocal rank fusion: a pure function over ranked identity lists.

Only ranks enter the fused score, ``sum(1 / (k + rank))`` with one-based ranks and ``k = 60``; raw
provider scores are never added, averaged, normalised or compared. Ties are broken by the best single
rank, then the semantic rank, then the lexical rank (missing ranks sort last), then the identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from runiq.rag._documents import ChunkKey

__all__ = ["RRF_K", "FusedCandidate", "FusedRanking", "fused_ranking", "reciprocal_rank_fusion"]

RRF_K = 60


@dataclass(frozen=True, slots=True)
class FusedCandidate:
    key: ChunkKey
    score: float
    ranks: tuple[int | None, ...]  # one entry per input list, one-based, None when absent


def reciprocal_rank_fusion(*ranked: Sequence[ChunkKey], k: int = RRF_K) -> list[FusedCandidate]:
    """Fuse ranked lists (best first). Duplicates within one list keep their first rank."""
    return fused_ranking(*ranked, k=k).candidates()


class FusedRanking:
    """Every fused candidate in order; :meth:`candidates` builds the first ``limit`` of them."""

    __slots__ = ("_ordered",)

    def __init__(self, ordered: list[tuple[tuple[Any, ...], ChunkKey, list[int | None]]]) -> None:
        self._ordered = ordered

    def __len__(self) -> int:
        return len(self._ordered)

    def candidates(self, limit: int | None = None) -> list[FusedCandidate]:
        return [FusedCandidate(key, -order[0], tuple(ranks)) for order, key, ranks in self._ordered[:limit]]


def fused_ranking(*ranked: Sequence[ChunkKey], k: int = RRF_K) -> FusedRanking:
    """:func:`reciprocal_rank_fusion`'s order, for a caller that keeps only the best few candidates."""
    sources = len(ranked)
    unranked: list[float] = [_MISSING] * sources
    # Per candidate, in one pass: its sort entry [fused score, best rank, rank in each source (missing: inf)]
    # and its ranks (missing: None). Scores are summed in source order.
    entries: dict[ChunkKey, tuple[list[float], list[int | None]]] = {}
    for source, keys in enumerate(ranked):
        slot = source + 2
        for rank, key in enumerate(keys, start=1):
            found = entries.get(key)
            if found is None:
                entry, ranks = entries[key] = ([0.0, rank, *unranked], [None] * sources)
            else:
                entry, ranks = found
                if ranks[source] is not None:
                    continue  # listed again in this source: the first rank stands
                if rank < entry[1]:
                    entry[1] = rank
            entry[0] += 1.0 / (k + rank)
            entry[slot] = rank
            ranks[source] = rank
    # The sort key: (-score, best rank, rank per source (missing last), identity). Identities are unique,
    # so keys never tie and the order is total.
    ordered = [
        ((-entry[0], *entry[1:], key.document_id, key.chunk_id), key, ranks) for key, (entry, ranks) in entries.items()
    ]
    ordered.sort(key=itemgetter(0))
    return FusedRanking(ordered)


_MISSING = float("inf")  # a source that did not return the candidate sorts it after every rank
