"""Reciprocal rank fusion: a pure function over ranked identity lists.

Only ranks enter the fused score, ``sum(1 / (k + rank))`` with one-based ranks and ``k = 60``; raw
provider scores are never added, averaged, normalised or compared. Ties are broken by the best single
rank, then the semantic rank, then the lexical rank (missing ranks sort last), then the identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runiq.rag.documents import ChunkKey

__all__ = ["RRF_K", "FusedCandidate", "reciprocal_rank_fusion"]

RRF_K = 60


@dataclass(frozen=True, slots=True)
class FusedCandidate:
    key: ChunkKey
    score: float
    ranks: tuple[int | None, ...]  # one entry per input list, one-based, None when absent


def reciprocal_rank_fusion(
    *ranked: Sequence[ChunkKey], k: int = RRF_K, limit: int | None = None
) -> list[FusedCandidate]:
    """Fuse ranked lists (best first). Duplicates within one list keep their first rank.

    ``limit``: return only the best ``limit`` candidates (all when ``None``); the order is the same.
    """
    if limit is not None and limit < 0:
        raise ValueError("limit must not be negative.")
    positions: dict[ChunkKey, list[int | None]] = {}
    for source, keys in enumerate(ranked):
        for rank, key in enumerate(keys, start=1):
            slots = positions.get(key)
            if slots is None:
                positions[key] = slots = [None] * len(ranked)
            if slots[source] is None:
                slots[source] = rank
    # The order as one plain tuple per candidate, compared in C rather than through a key function:
    # (-score, best rank, the ranks with absent ones last, document id, chunk id). The identity is
    # unique, so the candidate and its ranks after it are never compared.
    rows = []
    for key, slots in positions.items():
        present = [r for r in slots if r is not None]
        score = sum([1.0 / (k + r) for r in present])
        ordered = tuple(_ABSENT if r is None else r for r in slots)
        rows.append((-score, min(present), ordered, key.document_id, key.chunk_id, key, tuple(slots)))
    rows.sort()
    return [FusedCandidate(key, -negated, ranks) for negated, _, _, _, _, key, ranks in rows[:limit]]


_ABSENT = float("inf")  # an absent rank sorts after every rank a list gives
