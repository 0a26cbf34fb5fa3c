"""Retrieval results: score semantics and provenance on every hit."""

from __future__ import annotations

from dataclasses import dataclass

from runiq.rag.documents import ChunkKey, Metadata
from runiq.rag.retrieval.query import RagRetrievalMode

__all__ = ["RagRetrievalHit", "RagRetrievalProvenance", "RagRetrievalResult", "RagRetrievalStatistics", "SourceRank"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceRank:
    """Where a hit stood in one source: its one-based rank and that source's raw score and metric."""

    rank: int
    raw_score: float
    metric: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRetrievalProvenance:
    """How a hit was found. Semantic and lexical raw scores are kept side by side, never combined.

    ``fused_score`` is the reciprocal-rank-fusion value ``sum(1 / (60 + rank))`` (hybrid only).
    """

    mode: RagRetrievalMode
    semantic: SourceRank | None = None
    lexical: SourceRank | None = None
    fused_score: float | None = None
    fused_rank: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRetrievalHit:
    """One retrieved chunk.

    ``raw_score``/``metric``/``higher_is_better``/``relevance`` describe the *semantic* (vector) score
    when the hit has one; a lexical-only hit has them all ``None`` and its lexical score lives in
    ``provenance.lexical``. ``relevance`` is in [0, 1] or ``None``; it is never confidence.
    """

    document_id: str
    chunk_id: str
    content: str
    metadata: Metadata
    rank: int
    raw_score: float | None
    metric: str | None
    higher_is_better: bool | None
    relevance: float | None
    provenance: RagRetrievalProvenance

    @property
    def key(self) -> ChunkKey:
        return ChunkKey(self.document_id, self.chunk_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRetrievalStatistics:
    """Candidate counts per source; ``None`` means the source did not run."""

    semantic_candidates: int | None = None
    lexical_candidates: int | None = None
    fused_candidates: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRetrievalResult:
    index_name: str
    mode: RagRetrievalMode
    hits: tuple[RagRetrievalHit, ...]
    statistics: RagRetrievalStatistics
    duration_seconds: float
