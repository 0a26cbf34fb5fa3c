"""Acceptance, duplicate filtering and limits: a pure function over the retrieved hits.

For each candidate, in retrieval order, the first rule that matches decides:

1. ``invalid_score``: a relevance that is NaN, infinite or outside [0, 1]; a raw score that is not
   finite; or a hit with no lexical rank and no (finite raw score, metric) pair to judge it by.
2. ``empty_content``: blank content has nothing to contribute.
3. Relevance present: ``below_minimum_relevance`` when under ``minimum_relevance`` (equal passes).
   Relevance ``None``: ``relevance_unavailable`` unless the null-relevance policy accepts it.
4. ``duplicate_identity``, ``duplicate_content`` (normalised text equal), ``near_duplicate_content``
   (shingle Jaccard >= threshold), each against the candidates accepted so far.
5. ``document_limit_exceeded`` when the document already has ``maximum_chunks_per_document`` accepted.
6. ``result_limit_exceeded`` when ``maximum_accepted_results`` are already accepted.
7. Otherwise accepted.

Relevance never reorders candidates: retrieval order (semantic score, lexical rank or RRF) stands,
and only a reranker changes it later.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from runiq.rag._context.duplicates import ContentFingerprint, fingerprint, jaccard
from runiq.rag._context.options import NullRelevancePolicy, RagContextOptions
from runiq.rag._context.results import RagDecisionReason
from runiq.rag._documents import ChunkKey
from runiq.rag._retrieval.results import RagRetrievalHit

__all__ = ["AcceptanceResult", "evaluate_acceptance"]


@dataclass(frozen=True, slots=True)
class AcceptanceResult:
    accepted: tuple[RagRetrievalHit, ...]  # in retrieval order
    reasons: tuple[RagDecisionReason | None, ...]  # one per input position; None = accepted


def _finite(value: float | None) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value))


def _score_reason(hit: RagRetrievalHit, options: RagContextOptions) -> RagDecisionReason | None:
    relevance = hit.relevance
    lexical = hit.provenance.lexical is not None
    if not _finite(relevance) or (relevance is not None and not 0.0 <= relevance <= 1.0):
        return RagDecisionReason.INVALID_SCORE
    if not _finite(hit.raw_score):
        return RagDecisionReason.INVALID_SCORE
    semantic_score = hit.raw_score is not None and bool(hit.metric and hit.metric.strip())
    if not (lexical or semantic_score):
        return RagDecisionReason.INVALID_SCORE
    if not hit.content.strip():
        return RagDecisionReason.EMPTY_CONTENT
    if relevance is not None:
        minimum = options.minimum_relevance
        return RagDecisionReason.BELOW_MINIMUM_RELEVANCE if minimum is not None and relevance < minimum else None
    policy = options.null_relevance_policy
    if policy is NullRelevancePolicy.ACCEPT or (policy is NullRelevancePolicy.ACCEPT_LEXICAL and lexical):
        return None
    return RagDecisionReason.RELEVANCE_UNAVAILABLE


class _Accepted:
    def __init__(self, options: RagContextOptions) -> None:
        self.options = options
        self.hits: list[RagRetrievalHit] = []
        self.keys: set[ChunkKey] = set()
        self.digests: set[str] = set()
        self.prints: list[ContentFingerprint] = []
        self.per_document: Counter[str] = Counter()

    def reason(self, hit: RagRetrievalHit, fp: ContentFingerprint) -> RagDecisionReason | None:
        duplicates = self.options.duplicates
        if hit.key in self.keys:
            return RagDecisionReason.DUPLICATE_IDENTITY
        if duplicates.exact_content and fp.digest in self.digests:
            return RagDecisionReason.DUPLICATE_CONTENT
        threshold = duplicates.near_duplicate_threshold
        if threshold is not None and any(jaccard(fp.shingles, other.shingles) >= threshold for other in self.prints):
            return RagDecisionReason.NEAR_DUPLICATE_CONTENT
        limit = self.options.maximum_chunks_per_document
        if limit is not None and self.per_document[hit.document_id] >= limit:
            return RagDecisionReason.DOCUMENT_LIMIT_EXCEEDED
        if len(self.hits) >= self.options.maximum_accepted_results:
            return RagDecisionReason.RESULT_LIMIT_EXCEEDED
        return None

    def add(self, hit: RagRetrievalHit, fp: ContentFingerprint) -> None:
        self.hits.append(hit)
        self.keys.add(hit.key)
        self.digests.add(fp.digest)
        self.prints.append(fp)
        self.per_document[hit.document_id] += 1


def evaluate_acceptance(hits: Sequence[RagRetrievalHit], options: RagContextOptions) -> AcceptanceResult:
    """Apply steps 1-6 above to ``hits`` (retrieval order). Pure and deterministic."""
    accepted = _Accepted(options)
    positions: list[RagDecisionReason | None] = []
    for hit in hits:
        reason = _score_reason(hit, options)
        if reason is None:
            fp = fingerprint(hit.content, options.duplicates.shingle_size)
            reason = accepted.reason(hit, fp)
            if reason is None:
                accepted.add(hit, fp)
        positions.append(reason)
    return AcceptanceResult(tuple(accepted.hits), tuple(positions))
