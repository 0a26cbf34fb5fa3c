"""What the policy path returns: the selected context, and a content-free decision for every candidate."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from runiq.rag._context.options import ContextBudgetUnit, RerankerFailurePolicy
from runiq.rag._reranking.errors import RerankingFailureCode, RerankResponseViolation
from runiq.rag._reranking.types import RagAnswerability
from runiq.rag._retrieval.query import RagRetrievalMode
from runiq.rag._retrieval.results import RagRetrievalHit, RagRetrievalResult

__all__ = [
    "RagCandidateDecision",
    "RagContextBudgetReport",
    "RagContextItem",
    "RagContextOutcome",
    "RagContextResult",
    "RagDecisionReason",
    "RagNoContextReason",
    "RagPolicyStage",
    "RagRerankScore",
    "RagRerankingOutcome",
    "RagRerankingReport",
]


class RagPolicyStage(StrEnum):
    """The step of the policy path that made a decision, in execution order."""

    ACCEPTANCE = "acceptance"
    DEDUPLICATION = "deduplication"
    LIMITS = "limits"
    RERANKING = "reranking"
    GROUNDING = "grounding"
    BUDGET = "budget"


class RagDecisionReason(StrEnum):
    """Why a candidate is in the context or not. Exactly one reason per candidate."""

    SELECTED = "selected"
    INVALID_SCORE = "invalid_score"  # NaN/inf score, relevance outside [0, 1], or no usable score at all
    EMPTY_CONTENT = "empty_content"
    BELOW_MINIMUM_RELEVANCE = "below_minimum_relevance"
    RELEVANCE_UNAVAILABLE = "relevance_unavailable"  # relevance None, rejected by the null-relevance policy
    DUPLICATE_IDENTITY = "duplicate_identity"
    DUPLICATE_CONTENT = "duplicate_content"
    NEAR_DUPLICATE_CONTENT = "near_duplicate_content"
    DOCUMENT_LIMIT_EXCEEDED = "document_limit_exceeded"
    RESULT_LIMIT_EXCEEDED = "result_limit_exceeded"
    RERANKING_FAILED = "reranking_failed"  # only in RerankingFailedError.decisions
    NOT_ANSWERABLE = "not_answerable"  # the reranker marked this candidate not answerable
    NOT_GROUNDED = "not_grounded"  # answerability was required and the aggregate signal was missing or negative
    BUDGET_EXCEEDED = "budget_exceeded"

    @property
    def stage(self) -> RagPolicyStage:
        return _STAGES[self]


_STAGES = {
    RagDecisionReason.SELECTED: RagPolicyStage.BUDGET,
    RagDecisionReason.INVALID_SCORE: RagPolicyStage.ACCEPTANCE,
    RagDecisionReason.EMPTY_CONTENT: RagPolicyStage.ACCEPTANCE,
    RagDecisionReason.BELOW_MINIMUM_RELEVANCE: RagPolicyStage.ACCEPTANCE,
    RagDecisionReason.RELEVANCE_UNAVAILABLE: RagPolicyStage.ACCEPTANCE,
    RagDecisionReason.DUPLICATE_IDENTITY: RagPolicyStage.DEDUPLICATION,
    RagDecisionReason.DUPLICATE_CONTENT: RagPolicyStage.DEDUPLICATION,
    RagDecisionReason.NEAR_DUPLICATE_CONTENT: RagPolicyStage.DEDUPLICATION,
    RagDecisionReason.DOCUMENT_LIMIT_EXCEEDED: RagPolicyStage.LIMITS,
    RagDecisionReason.RESULT_LIMIT_EXCEEDED: RagPolicyStage.LIMITS,
    RagDecisionReason.RERANKING_FAILED: RagPolicyStage.RERANKING,
    RagDecisionReason.NOT_ANSWERABLE: RagPolicyStage.GROUNDING,
    RagDecisionReason.NOT_GROUNDED: RagPolicyStage.GROUNDING,
    RagDecisionReason.BUDGET_EXCEEDED: RagPolicyStage.BUDGET,
}


class RagContextOutcome(StrEnum):
    CONTEXT = "context"  # at least one chunk was selected
    NO_CONTEXT = "no_context"  # nothing was selected (``no_context_reason`` says why)
    NOT_GROUNDED = "not_grounded"  # candidates were accepted, but the answerability requirement failed


class RagNoContextReason(StrEnum):
    NO_RESULTS = "no_results"  # retrieval returned no candidates
    BELOW_RELEVANCE_THRESHOLD = "below_relevance_threshold"  # every rejection was below_minimum_relevance
    CANDIDATES_REJECTED = "candidates_rejected"  # every candidate was rejected, for mixed reasons
    NOT_ANSWERABLE = "not_answerable"  # the reranker said not answerable (or unknown) while it was required
    ANSWERABILITY_UNAVAILABLE = "answerability_unavailable"  # required, but reranking fell back: no signal
    CONTEXT_BUDGET_EXHAUSTED = "context_budget_exhausted"  # accepted candidates, none fit the budget


class RagRerankingOutcome(StrEnum):
    DISABLED = "disabled"  # reranking is off; no call
    SKIPPED = "skipped"  # on, but nothing was accepted; no call
    SUCCEEDED = "succeeded"
    FALLBACK = "fallback"  # failed; the accepted order was kept (use_retrieval_order)
    FAILED = "failed"  # failed with policy fail (only seen through RerankingFailedError)


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRerankScore:
    """The reranker's verdict, kept beside (never instead of) the retrieval scores."""

    relevance: float
    answerability: RagAnswerability
    rank: int  # one-based position in the reranked order


@dataclass(frozen=True, slots=True, kw_only=True)
class RagRerankingReport:
    outcome: RagRerankingOutcome
    failure_policy: RerankerFailurePolicy
    provider: str | None = None
    ran: bool = False  # the reranker was called
    candidate_count: int = 0  # candidates sent
    duration_seconds: float = 0.0
    answerability: RagAnswerability = RagAnswerability.UNKNOWN  # aggregate; UNKNOWN unless it succeeded
    timed_out: bool = False
    failure_code: RerankingFailureCode | None = None
    violation: RerankResponseViolation | None = None
    cause_type: str | None = None  # class name of the provider's exception, never its text


@dataclass(frozen=True, slots=True, kw_only=True)
class RagContextBudgetReport:
    unit: ContextBudgetUnit
    maximum: int
    used: int
    per_chunk_overhead: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RagCandidateDecision:
    """One retrieved candidate's fate. Identities, ranks and codes only: no content, no query.

    ``accepted`` is whether it passed acceptance, deduplication and limits; ``accepted_rank`` is its
    one-based position then (the ``original_rank`` a reranker saw); ``context_rank`` its one-based
    position in the context when selected.
    """

    document_id: str
    chunk_id: str
    retrieval_rank: int
    reason: RagDecisionReason
    accepted: bool = False
    accepted_rank: int | None = None
    context_rank: int | None = None
    rerank: RagRerankScore | None = None
    size: int | None = None  # budget units of the content (accepted candidates only)

    @property
    def selected(self) -> bool:
        return self.reason is RagDecisionReason.SELECTED

    @property
    def stage(self) -> RagPolicyStage:
        return self.reason.stage


@dataclass(frozen=True, slots=True, kw_only=True)
class RagContextItem:
    """A selected chunk. ``hit`` is the retrieval hit itself, unchanged (scores and provenance intact).

    ``repr()`` leaves the hit (and so its content) out.
    """

    hit: RagRetrievalHit = field(repr=False)
    context_rank: int
    accepted_rank: int
    size: int
    rerank: RagRerankScore | None = None

    @property
    def document_id(self) -> str:
        return self.hit.document_id

    @property
    def chunk_id(self) -> str:
        return self.hit.chunk_id

    @property
    def content(self) -> str:
        return self.hit.content


@dataclass(frozen=True, slots=True, kw_only=True)
class RagContextResult:
    """The assembled context and how it came about.

    ``context`` is in context order. ``decisions`` has one entry per retrieved candidate, in retrieval
    order. ``grounded`` is true when context was selected and the reranker's aggregate answerability was
    ``ANSWERABLE``: it reports the signal the policy saw, it is not a verification of the answer.
    """

    index_name: str
    retrieval_mode: RagRetrievalMode
    outcome: RagContextOutcome
    no_context_reason: RagNoContextReason | None
    context: tuple[RagContextItem, ...]
    decisions: tuple[RagCandidateDecision, ...]
    reranking: RagRerankingReport
    budget: RagContextBudgetReport
    duration_seconds: float
    retrieval: RagRetrievalResult = field(repr=False)

    @property
    def answerability(self) -> RagAnswerability:
        return self.reranking.answerability

    @property
    def has_context(self) -> bool:
        return bool(self.context)

    @property
    def grounded(self) -> bool:
        return self.has_context and self.answerability is RagAnswerability.ANSWERABLE

    @property
    def accepted_count(self) -> int:
        return sum(1 for d in self.decisions if d.accepted)

    @property
    def reason_counts(self) -> dict[str, int]:
        """Candidates per reason code (what the ``context.assembled`` event logs)."""
        return dict(sorted(Counter(d.reason.value for d in self.decisions).items()))
