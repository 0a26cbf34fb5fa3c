"""The reference reranker: query-term overlap, in process, deterministic, no model.

Why this one: the core needs a reranker that runs offline with no model weights, so it ships this
documented lexical-overlap scorer (a port of the .NET sample ``KeywordOverlapReranker``, using
runiq's identifier-safe tokenizer). A model-based reranker (a cross-encoder from a local path)
belongs in a plugin, which passes the same :class:`~runiq.rag.testing.RerankerContract`.

Scoring, for each candidate:

* Terms are :func:`runiq.rag._lexical.tokenizer.tokenize` tokens (NFKC, case-folded, identifiers such
  as ``POL-HR-014`` kept whole *and* split), as a set. Purely alphabetic tokens shorter than
  ``minimum_term_length`` (default 3) are dropped, which removes most function words ("a", "is",
  "of") without a language-specific stop list; tokens with digits are always kept (``014``, ``cs1503``).
* ``relevance = |query terms ∩ candidate terms| / |query terms|``, in [0, 1] (0 when the query has no terms).
* Candidate answerability: ``ANSWERABLE`` when relevance >= ``answerable_threshold`` (default 0.5),
  ``NOT_ANSWERABLE`` when no query term occurs, otherwise ``UNKNOWN``. A query with no terms gives
  ``UNKNOWN`` for every candidate.
* Aggregate: ``ANSWERABLE`` if any candidate is; ``NOT_ANSWERABLE`` if every candidate is; else ``UNKNOWN``.

Overlap is evidence of topical match, not of entailment: treat ``ANSWERABLE`` as a weak signal.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from runiq.errors import RagConfigurationError, call_translated
from runiq.rag._lexical.tokenizer import tokenize
from runiq.rag._reranking.types import RagAnswerability, RagRerankCandidateResult, RagRerankRequest, RagRerankResponse

__all__ = ["LexicalOverlapOptions", "LexicalOverlapReranker", "LexicalOverlapReranking"]

PROVIDER_NAME = "lexical-overlap"


class LexicalOverlapOptions(BaseModel):
    """Options of the ``lexical-overlap`` reranker provider."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answerable_threshold: float = Field(default=0.5, gt=0.0, le=1.0)
    minimum_term_length: int = Field(default=3, ge=1, le=32)


class LexicalOverlapReranker:
    """Scores candidates by the share of query terms they contain. Local: ``remote`` is ``False``."""

    provider_name = PROVIDER_NAME
    remote = False

    def __init__(self, *, answerable_threshold: float = 0.5, minimum_term_length: int = 3) -> None:
        options = call_translated(
            lambda: LexicalOverlapOptions(
                answerable_threshold=answerable_threshold, minimum_term_length=minimum_term_length
            ),
            _invalid_options,
        )
        self.answerable_threshold = options.answerable_threshold
        self.minimum_term_length = options.minimum_term_length

    @classmethod
    def from_options(cls, options: LexicalOverlapOptions) -> LexicalOverlapReranker:
        return cls(answerable_threshold=options.answerable_threshold, minimum_term_length=options.minimum_term_length)

    def terms(self, text: str) -> frozenset[str]:
        return frozenset(_filtered(tokenize(text), self.minimum_term_length))

    def score(self, query_terms: frozenset[str], content: str) -> tuple[float, RagAnswerability]:
        if not query_terms:
            return 0.0, RagAnswerability.UNKNOWN
        overlap = len(query_terms & self.terms(content))
        relevance = overlap / len(query_terms)
        if overlap == 0:
            return 0.0, RagAnswerability.NOT_ANSWERABLE
        if relevance >= self.answerable_threshold:
            return relevance, RagAnswerability.ANSWERABLE
        return relevance, RagAnswerability.UNKNOWN

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        query_terms = self.terms(request.query)
        results = []
        for candidate in request.candidates:
            relevance, answerability = self.score(query_terms, candidate.content)
            results.append(
                RagRerankCandidateResult(
                    document_id=candidate.document_id,
                    chunk_id=candidate.chunk_id,
                    relevance=relevance,
                    answerability=answerability,
                )
            )
        return RagRerankResponse(candidates=tuple(results), answerability=_aggregate(r.answerability for r in results))


def _filtered(tokens: Iterable[str], minimum_length: int) -> Iterable[str]:
    for token in tokens:
        if token.isalpha() and len(token) < minimum_length:
            continue
        yield token


def _aggregate(values: Iterable[RagAnswerability]) -> RagAnswerability:
    seen = set(values)
    if RagAnswerability.ANSWERABLE in seen:
        return RagAnswerability.ANSWERABLE
    if seen == {RagAnswerability.NOT_ANSWERABLE}:
        return RagAnswerability.NOT_ANSWERABLE
    return RagAnswerability.UNKNOWN


@dataclass(frozen=True, slots=True, kw_only=True)
class LexicalOverlapReranking:
    """Typed selection: ``index.use_reranker(LexicalOverlapReranking(answerable_threshold=0.6))``."""

    answerable_threshold: float = 0.5
    minimum_term_length: int = 3

    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    @property
    def display_name(self) -> str:
        return "Lexical overlap reranker"

    def provider_options(self) -> Mapping[str, object]:
        return {"answerable_threshold": self.answerable_threshold, "minimum_term_length": self.minimum_term_length}


def _invalid_options(exc: Exception) -> Exception:
    if not isinstance(exc, ValueError):
        return exc
    return RagConfigurationError(
        "LexicalOverlapReranker needs 0 < answerable_threshold <= 1 and 1 <= minimum_term_length <= 32."
    )
