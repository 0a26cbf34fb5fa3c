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

__all__ = ["RRF_K", "FusedCandidate", "reciprocal_rank_fusion"]

RRF_K = 60


@dataclass(frozen=True, slots=True)
class FusedCandidate:
    key: ChunkKey
    score: float
    ranks: tuple[int | None, ...]  # one entry per input list, one-based, None when absent


def reciprocal_rank_fusion(*ranked: Sequence[ChunkKey], k: int = RRF_K) -> list[FusedCandidate]:
    """Fuse ranked lists (best first). Duplicates within one list keep their first rank."""
    sources = len(ranked)
    unranked: list[float] = [_MISSING] * sources
    # Per candidate, in one pass: [fused score, best rank, rank in each source (missing: inf)]. Scores are
    # summed in source order, so a candidate's score is the same float whatever else is in the lists.
    entries: dict[ChunkKey, list[float]] = {}
    for source, keys in enumerate(ranked):
        slot = source + 2
        for rank, key in enumerate(keys, start=1):
            entry = entries.get(key)
            if entry is None:
                entries[key] = entry = [0.0, rank, *unranked]
            elif entry[slot] != _MISSING:
                continue  # listed again in this source: the first rank stands
            elif rank < entry[1]:
                entry[1] = rank
            entry[0] += 1.0 / (k + rank)
            entry[slot] = rank
    # The sort key: (-score, best rank, rank per source (missing last), identity). Identities are unique,
    # so keys never tie and the order is total.
    keyed: list[tuple[tuple[Any, ...], ChunkKey]] = [
        ((-entry[0], *entry[1:], key.document_id, key.chunk_id), key) for key, entry in entries.items()
    ]
    keyed.sort(key=itemgetter(0))
    return [FusedCandidate(key, -order[0], _ranks(order[2 : 2 + sources])) for order, key in keyed]


def _ranks(slots: tuple[Any, ...]) -> tuple[int | None, ...]:
    return tuple([None if r == _MISSING else int(r) for r in slots])


_MISSING = float("inf")  # a source that did not return the candidate sorts it after every rank
