"""Reranker errors. They extend the :mod:`runiq.errors` tree and keep its rule: fixed messages.

::

    ProviderError
    └── RerankerError                                  a reranker call failed (``.code`` says how)
        ├── RerankerTimeoutError(..., TimeoutError)    the policy's deadline passed
        ├── RerankerUnavailableError                   reranking is enabled but no reranker is configured
        └── RerankerResponseError(..., ProviderResponseError)   the response broke the contract
    RagConfigurationError
    └── RerankerNotApprovedError                       a remote reranker the host has not approved
    RagError
    └── RerankingFailedError                           the policy is ``fail`` and reranking failed

Neither the query nor candidate content ever reaches a message or an attribute: a provider's own
exception is summarised by its class name (``cause_type``) and is not chained, because its text can
echo the input it was given.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import TYPE_CHECKING

from runiq.errors import ProviderError, ProviderResponseError, RagConfigurationError, RagError

if TYPE_CHECKING:
    from runiq.rag._context.results import RagCandidateDecision

__all__ = [
    "RerankResponseViolation",
    "RerankerError",
    "RerankerNotApprovedError",
    "RerankerResponseError",
    "RerankerTimeoutError",
    "RerankerUnavailableError",
    "RerankingFailedError",
    "RerankingFailureCode",
]


class RerankingFailureCode(StrEnum):
    """Why a reranking step failed; stable values for callers, logs and HTTP payloads."""

    UNAVAILABLE = "reranker_unavailable"  # enabled, but the index/host has no reranker
    NOT_APPROVED = "reranker_not_approved"  # a remote reranker the host did not approve; nothing was sent
    TIMEOUT = "reranker_timeout"  # the deadline passed (or the provider reported its own timeout)
    FAILED = "reranker_failed"  # the provider raised
    INVALID_RESPONSE = "reranker_invalid_response"  # the response broke the contract


class RerankResponseViolation(StrEnum):
    """The first contract rule a response broke. Validation is all-or-nothing."""

    NOT_A_RESPONSE = "not_a_response"
    INVALID_AGGREGATE_ANSWERABILITY = "invalid_aggregate_answerability"
    NOT_A_CANDIDATE_RESULT = "not_a_candidate_result"
    INVALID_IDENTITY = "invalid_identity"
    UNKNOWN_IDENTITY = "unknown_identity"
    DUPLICATE_IDENTITY = "duplicate_identity"
    MISSING_IDENTITY = "missing_identity"
    INVALID_RELEVANCE = "invalid_relevance"
    NON_FINITE_RELEVANCE = "non_finite_relevance"
    RELEVANCE_OUT_OF_RANGE = "relevance_out_of_range"
    INVALID_CANDIDATE_ANSWERABILITY = "invalid_candidate_answerability"


_VIOLATION_TEXT = {
    RerankResponseViolation.NOT_A_RESPONSE: "the response is not a RagRerankResponse",
    RerankResponseViolation.INVALID_AGGREGATE_ANSWERABILITY: "the aggregate answerability is not a RagAnswerability",
    RerankResponseViolation.NOT_A_CANDIDATE_RESULT: "a candidate result is not a RagRerankCandidateResult",
    RerankResponseViolation.INVALID_IDENTITY: "a candidate identity is not a pair of non-empty strings",
    RerankResponseViolation.UNKNOWN_IDENTITY: "the response names a candidate that was not requested",
    RerankResponseViolation.DUPLICATE_IDENTITY: "the response names a candidate more than once",
    RerankResponseViolation.MISSING_IDENTITY: "the response omits a requested candidate",
    RerankResponseViolation.INVALID_RELEVANCE: "a relevance is not a real number",
    RerankResponseViolation.NON_FINITE_RELEVANCE: "a relevance is NaN or infinite",
    RerankResponseViolation.RELEVANCE_OUT_OF_RANGE: "a relevance is outside [0, 1]",
    RerankResponseViolation.INVALID_CANDIDATE_ANSWERABILITY: "a candidate answerability is not a RagAnswerability",
}


class RerankerError(ProviderError):
    """A reranker call failed. ``code`` is a :class:`RerankingFailureCode`; ``cause_type`` names the
    provider exception's class when the provider raised."""

    code: RerankingFailureCode = RerankingFailureCode.FAILED

    def __init__(
        self, provider: str, reason: str = "the reranker call failed", *, cause_type: str | None = None
    ) -> None:
        self.cause_type = cause_type
        super().__init__(provider, reason)


class RerankerTimeoutError(RerankerError, TimeoutError):
    code = RerankingFailureCode.TIMEOUT

    def __init__(self, provider: str, timeout_seconds: float | None = None, *, cause_type: str | None = None) -> None:
        self.timeout_seconds = timeout_seconds
        reason = "the call timed out" if timeout_seconds is None else f"the call timed out after {timeout_seconds:g}s"
        super().__init__(provider, reason, cause_type=cause_type)


class RerankerUnavailableError(RerankerError):
    code = RerankingFailureCode.UNAVAILABLE

    def __init__(self, provider: str = "<none>") -> None:
        super().__init__(provider, "reranking is enabled but no reranker is configured")


class RerankerResponseError(RerankerError, ProviderResponseError):
    """The response broke the contract; ``violation`` says which rule (never which value)."""

    code = RerankingFailureCode.INVALID_RESPONSE

    def __init__(self, provider: str, violation: RerankResponseViolation) -> None:
        self.violation = violation
        super().__init__(provider, f"invalid response: {_VIOLATION_TEXT[violation]}")


class RerankerNotApprovedError(RagConfigurationError):
    """A reranker that sends candidate content off-host was configured without the host's approval."""

    code = RerankingFailureCode.NOT_APPROVED

    def __init__(self, provider: str) -> None:
        self.provider = provider
        super().__init__(
            f"Reranker provider '{provider}' sends query and chunk content off-host and has not been approved; "
            "register it with approved=True once the host has approved this data egress."
        )


class RerankingFailedError(RagError):
    """Reranking failed and the policy is ``RerankerFailurePolicy.FAIL``: no context is returned.

    ``decisions`` is the content-free record of every candidate up to the failure (accepted candidates
    carry the reason ``reranking_failed``); ``__cause__`` is the content-free :class:`RerankerError`.
    """

    def __init__(
        self,
        index_name: str,
        code: RerankingFailureCode,
        *,
        provider: str | None = None,
        timed_out: bool = False,
        violation: RerankResponseViolation | None = None,
        cause_type: str | None = None,
        decisions: Sequence[RagCandidateDecision] = (),
    ) -> None:
        self.index_name = index_name
        self.code = code
        self.provider = provider
        self.timed_out = timed_out
        self.violation = violation
        self.cause_type = cause_type
        self.decisions = tuple(decisions)
        super().__init__(f"RAG reranking failed for index '{index_name}' ({code.value}); no context was assembled.")
