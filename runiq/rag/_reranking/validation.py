"""All-or-nothing validation of a reranker response against the request it answers."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

from runiq.rag._documents import ChunkKey
from runiq.rag._reranking.errors import RerankerResponseError, RerankResponseViolation
from runiq.rag._reranking.types import RagAnswerability, RagRerankCandidateResult, RagRerankRequest, RagRerankResponse

__all__ = ["ValidatedRerank", "validate_rerank_response"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidatedRerank:
    """A response that passed every rule: ``scores`` maps each requested identity to ``(relevance,
    answerability)``, with relevance as a plain ``float``."""

    scores: Mapping[ChunkKey, tuple[float, RagAnswerability]]
    answerability: RagAnswerability


def _relevance(value: object) -> float | RerankResponseViolation:
    # numbers.Real admits numpy scalars (a cross-encoder returns float32) but not bool.
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return RerankResponseViolation.INVALID_RELEVANCE
    relevance = float(value)
    if not math.isfinite(relevance):
        return RerankResponseViolation.NON_FINITE_RELEVANCE
    if not 0.0 <= relevance <= 1.0:
        return RerankResponseViolation.RELEVANCE_OUT_OF_RANGE
    return relevance


def _check(
    item: object, expected: frozenset[ChunkKey], seen: Mapping[ChunkKey, object]
) -> tuple[ChunkKey, float, RagAnswerability] | RerankResponseViolation:
    if not isinstance(item, RagRerankCandidateResult):
        return RerankResponseViolation.NOT_A_CANDIDATE_RESULT
    document_id, chunk_id = item.document_id, item.chunk_id
    if not (isinstance(document_id, str) and document_id and isinstance(chunk_id, str) and chunk_id):
        return RerankResponseViolation.INVALID_IDENTITY
    key = ChunkKey(document_id, chunk_id)
    if key not in expected:
        return RerankResponseViolation.UNKNOWN_IDENTITY
    if key in seen:
        return RerankResponseViolation.DUPLICATE_IDENTITY
    relevance = _relevance(item.relevance)
    if isinstance(relevance, RerankResponseViolation):
        return relevance
    if not isinstance(item.answerability, RagAnswerability):
        return RerankResponseViolation.INVALID_CANDIDATE_ANSWERABILITY
    return key, relevance, item.answerability


def validate_rerank_response(request: RagRerankRequest, response: object, *, provider: str) -> ValidatedRerank:
    """Check ``response`` against ``request``; raise :class:`RerankerResponseError` on the first violation.

    Rules: a :class:`RagRerankResponse` with a defined aggregate answerability; every element a
    :class:`RagRerankCandidateResult` naming a requested identity, none twice, none missing; each
    relevance a finite real number in [0, 1]; each candidate answerability defined. Order is free.
    """
    if not isinstance(response, RagRerankResponse) or not isinstance(response.candidates, tuple):
        raise RerankerResponseError(provider, RerankResponseViolation.NOT_A_RESPONSE)
    if not isinstance(response.answerability, RagAnswerability):
        raise RerankerResponseError(provider, RerankResponseViolation.INVALID_AGGREGATE_ANSWERABILITY)
    expected = frozenset(request.keys)
    scores: dict[ChunkKey, tuple[float, RagAnswerability]] = {}
    for item in response.candidates:
        checked = _check(item, expected, scores)
        if isinstance(checked, RerankResponseViolation):
            raise RerankerResponseError(provider, checked)
        key, relevance, answerability = checked
        scores[key] = (relevance, answerability)
    if len(scores) != len(expected):
        raise RerankerResponseError(provider, RerankResponseViolation.MISSING_IDENTITY)
    return ValidatedRerank(scores=scores, answerability=response.answerability)
