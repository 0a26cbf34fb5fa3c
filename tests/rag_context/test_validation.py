"""Request validation and the response validator used directly (plugins call it in their own tests)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from runiq.errors import ProviderError, ProviderResponseError
from runiq.rag import RagValidationError
from runiq.rag._reranking import (
    MAX_RERANK_CANDIDATES,
    RagAnswerability,
    RagRerankCandidate,
    RagRerankCandidateResult,
    RagRerankRequest,
    RagRerankResponse,
    RerankerError,
    RerankerResponseError,
    RerankResponseViolation,
    validate_rerank_response,
)
from runiq.rag.providers import ChunkKey


def candidate(doc: str = "a", rank: int = 1, **changes: Any) -> RagRerankCandidate:
    values: dict[str, Any] = {"document_id": doc, "chunk_id": f"{doc}#0", "content": "text", "original_rank": rank}
    values.update(changes)
    return RagRerankCandidate(**values)


@pytest.mark.parametrize(
    "changes",
    [
        {"document_id": ""},
        {"document_id": " "},
        {"chunk_id": ""},
        {"content": None},
        {"original_rank": 0},
        {"original_rank": True},
    ],
)
def test_candidate_validation(changes: dict[str, Any]) -> None:
    """Identities are non-empty strings, content a string, the rank a positive integer."""
    with pytest.raises(RagValidationError):
        candidate(**changes)


def test_request_validation() -> None:
    """A non-empty query, 1..MAX candidates, unique identities and ranks; lists become tuples."""
    with pytest.raises(RagValidationError):
        RagRerankRequest(query=" ", candidates=(candidate(),))
    with pytest.raises(RagValidationError):
        RagRerankRequest(query="q", candidates=())
    with pytest.raises(RagValidationError):
        RagRerankRequest(query="q", candidates=(candidate("a", 1), candidate("a", 2)))
    with pytest.raises(RagValidationError):
        RagRerankRequest(query="q", candidates=(candidate("a", 1), candidate("b", 1)))
    with pytest.raises(RagValidationError):
        RagRerankRequest(query="q", candidates=("a",))  # type: ignore[arg-type]
    too_many = tuple(candidate(f"d{i}", i + 1) for i in range(MAX_RERANK_CANDIDATES + 1))
    with pytest.raises(RagValidationError):
        RagRerankRequest(query="q", candidates=too_many)
    request = RagRerankRequest(query="q", candidates=[candidate("a", 1), candidate("b", 2)])  # type: ignore[arg-type]
    assert isinstance(request.candidates, tuple)
    assert request.keys == (ChunkKey("a", "a#0"), ChunkKey("b", "b#0"))


def test_a_valid_response_in_any_order() -> None:
    """Order is free; scores come back as plain floats keyed by identity."""
    request = RagRerankRequest(query="q", candidates=(candidate("a", 1), candidate("b", 2)))
    response = RagRerankResponse(
        candidates=[  # type: ignore[arg-type]
            RagRerankCandidateResult(
                document_id="b", chunk_id="b#0", relevance=1, answerability=RagAnswerability.ANSWERABLE
            ),
            RagRerankCandidateResult(document_id="a", chunk_id="a#0", relevance=0.0),
        ],
        answerability=RagAnswerability.ANSWERABLE,
    )
    validated = validate_rerank_response(request, response, provider="p")
    assert validated.scores == {
        ChunkKey("b", "b#0"): (1.0, RagAnswerability.ANSWERABLE),
        ChunkKey("a", "a#0"): (0.0, RagAnswerability.UNKNOWN),
    }
    assert validated.answerability is RagAnswerability.ANSWERABLE


def test_the_error_tree_and_messages() -> None:
    """RerankerResponseError is a ProviderResponseError and a RerankerError; it names the rule, not the value."""
    request = RagRerankRequest(query="q", candidates=(candidate("a", 1),))
    response = RagRerankResponse(
        candidates=(RagRerankCandidateResult(document_id="a", chunk_id="a#0", relevance=math.nan),)
    )
    with pytest.raises(RerankerResponseError) as caught:
        validate_rerank_response(request, response, provider="my-reranker")
    error = caught.value
    assert isinstance(error, ProviderResponseError)
    assert isinstance(error, RerankerError)
    assert isinstance(error, ProviderError)
    assert error.violation is RerankResponseViolation.NON_FINITE_RELEVANCE
    assert error.provider == "my-reranker"
    assert str(error) == "Provider 'my-reranker': invalid response: a relevance is NaN or infinite."
    assert "nan" not in str(error).lower().replace("nan or", "")


def test_reprs_hide_query_and_content() -> None:
    """repr() of candidates and requests omits the content and the query."""
    request = RagRerankRequest(query="secret question", candidates=(candidate("a", 1, content="secret content"),))
    assert "secret" not in repr(request)
    assert "secret" not in repr(request.candidates[0])
