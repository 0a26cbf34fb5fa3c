"""Reranking: the :class:`RagReranker` protocol, its request/response types, strict response validation,
egress approval, and the reference ``lexical-overlap`` reranker."""

from __future__ import annotations

from runiq.rag._reranking.errors import (
    RerankerError,
    RerankerNotApprovedError,
    RerankerResponseError,
    RerankerTimeoutError,
    RerankerUnavailableError,
    RerankingFailedError,
    RerankingFailureCode,
    RerankResponseViolation,
)
from runiq.rag._reranking.lexical import LexicalOverlapOptions, LexicalOverlapReranker, LexicalOverlapReranking
from runiq.rag._reranking.registration import RerankerRegistration, RerankerResolver, index_reranker_resolver
from runiq.rag._reranking.types import (
    MAX_RERANK_CANDIDATES,
    RagAnswerability,
    RagRerankCandidate,
    RagRerankCandidateResult,
    RagReranker,
    RagRerankRequest,
    RagRerankResponse,
)
from runiq.rag._reranking.validation import ValidatedRerank, validate_rerank_response

__all__ = [
    "MAX_RERANK_CANDIDATES",
    "LexicalOverlapOptions",
    "LexicalOverlapReranker",
    "LexicalOverlapReranking",
    "RagAnswerability",
    "RagRerankCandidate",
    "RagRerankCandidateResult",
    "RagRerankRequest",
    "RagRerankResponse",
    "RagReranker",
    "RerankResponseViolation",
    "RerankerError",
    "RerankerNotApprovedError",
    "RerankerRegistration",
    "RerankerResolver",
    "RerankerResponseError",
    "RerankerTimeoutError",
    "RerankerUnavailableError",
    "RerankingFailedError",
    "RerankingFailureCode",
    "ValidatedRerank",
    "index_reranker_resolver",
    "validate_rerank_response",
]
