"""Retrieval: queries, the retriever facade, reciprocal rank fusion and provenance."""

from __future__ import annotations

from runiq.rag._retrieval.fusion import RRF_K, FusedCandidate, reciprocal_rank_fusion
from runiq.rag._retrieval.query import RagQuery, RagRetrievalMode
from runiq.rag._retrieval.results import (
    RagRetrievalHit,
    RagRetrievalProvenance,
    RagRetrievalResult,
    RagRetrievalStatistics,
    SourceRank,
)
from runiq.rag._retrieval.retriever import RagRetriever, RetrievalOptions

__all__ = [
    "RRF_K",
    "FusedCandidate",
    "RagQuery",
    "RagRetrievalHit",
    "RagRetrievalMode",
    "RagRetrievalProvenance",
    "RagRetrievalResult",
    "RagRetrievalStatistics",
    "RagRetriever",
    "RetrievalOptions",
    "SourceRank",
    "reciprocal_rank_fusion",
]
