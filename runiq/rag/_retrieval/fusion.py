"""Reciprocal rank fusion: a pure function over ranked identity lists.

Only ranks enter the fused score, ``sum(1 / (k + rank))`` with one-based ranks and ``k = 60``; raw
provider scores are never added, averaged, normalised or compared. Ties are broken by the best single
rank, then the semantic rank, then the lexical rank (missing ranks sort last), then the identity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from operator import itemgetter

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
    positions: dict[ChunkKey, list[int | None]] = {}
    for source, keys in enumerate(ranked):
        for rank, key in enumerate(keys, start=1):
            slots = positions.get(key)
            if slots is None:
                slots = positions[key] = [None] * sources
            if slots[source] is None:
                slots[source] = rank
    # One sort key per candidate, built once: (-score, best rank, rank per source (missing last), identity).
    # Identities are unique, so keys never tie and the candidates themselves are never compared.
    keyed: list[tuple[tuple[object, ...], FusedCandidate]] = []
    for key, slots in positions.items():
        present = [r for r in slots if r is not None]
        score = sum([1.0 / (k + r) for r in present])
        per_source = [_MISSING if r is None else r for r in slots]
        order = (-score, min(present), *per_source, key.document_id, key.chunk_id)
        keyed.append((order, FusedCandidate(key, score, tuple(slots))))
    keyed.sort(key=itemgetter(0))
    return [candidate for _, candidate in keyed]


_MISSING = float("inf")  # a source that did not return the candidate sorts it after every rank
