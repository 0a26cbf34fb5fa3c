"""Reciprocal rank fusion: a pure function over ranked identity lists.

Only ranks enter the fused score, ``sum(1 / (k + rank))`` with one-based ranks and ``k = 60``; raw
provider scores are never added, averaged, normalised or compared. Ties are broken by the best single
rank, then the semantic rank, then the lexical rank (missing ranks sort last), then the identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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
    positions: dict[ChunkKey, list[int | None]] = {}
    for source, keys in enumerate(ranked):
        for rank, key in enumerate(keys, start=1):
            slots = positions.setdefault(key, [None] * len(ranked))
            if slots[source] is None:
                slots[source] = rank
    fused = [
        FusedCandidate(key, sum(1.0 / (k + r) for r in ranks if r is not None), tuple(ranks))
        for key, ranks in positions.items()
    ]
    missing = float("inf")

    def order(item: FusedCandidate) -> tuple[object, ...]:
        present = [r for r in item.ranks if r is not None]
        per_source = tuple(missing if r is None else r for r in item.ranks)
        return (-item.score, min(present), *per_source, item.key.document_id, item.key.chunk_id)

    return sorted(fused, key=order)
