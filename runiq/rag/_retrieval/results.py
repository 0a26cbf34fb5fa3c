"""Retrieval results: score semantics and provenance on every hit."""

from __future__ import annotations

from dataclasses import dataclass

from runiq.rag._chunking.positions import END_OFFSET, PAGE, START_OFFSET
from runiq.rag._documents import ChunkKey, Metadata
from runiq.rag._retrieval.query import RagRetrievalMode

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
    ``page``, ``start_offset`` and ``end_offset`` say where the chunk lies in its document (from the
    chunk's metadata; see :mod:`runiq.rag._chunking.positions`), so an answer can cite "file, page".
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

    @property
    def page(self) -> int | None:
        """The page (PDF page, slide; from 1) the chunk starts on; None for a document without pages."""
        return _position(self.metadata, PAGE)

    @property
    def start_offset(self) -> int | None:
        """Where the chunk starts in its document's extracted text (characters); None if not recorded."""
        return _position(self.metadata, START_OFFSET)

    @property
    def end_offset(self) -> int | None:
        """Where the chunk ends in its document's extracted text (exclusive); None if not recorded."""
        return _position(self.metadata, END_OFFSET)


def _position(metadata: Metadata, key: str) -> int | None:
    value = metadata.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
