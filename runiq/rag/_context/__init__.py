"""The single runtime policy path: acceptance, duplicate filtering, limits, reranking, grounding, budget."""

from __future__ import annotations

from runiq.rag._context.assembler import ContextRetriever, RagContextAssembler
from runiq.rag._context.budget import estimate_tokens
from runiq.rag._context.duplicates import normalise_text
from runiq.rag._context.options import (
    ContextBudget,
    ContextBudgetUnit,
    DuplicateFilterOptions,
    GroundingOptions,
    NullRelevancePolicy,
    RagContextOptions,
    RerankerFailurePolicy,
    RerankingOptions,
)
from runiq.rag._context.results import (
    RagCandidateDecision,
    RagContextBudgetReport,
    RagContextItem,
    RagContextOutcome,
    RagContextResult,
    RagDecisionReason,
    RagNoContextReason,
    RagPolicyStage,
    RagRerankingOutcome,
    RagRerankingReport,
    RagRerankScore,
)

__all__ = [
    "ContextBudget",
    "ContextBudgetUnit",
    "ContextRetriever",
    "DuplicateFilterOptions",
    "GroundingOptions",
    "NullRelevancePolicy",
    "RagCandidateDecision",
    "RagContextAssembler",
    "RagContextBudgetReport",
    "RagContextItem",
    "RagContextOptions",
    "RagContextOutcome",
    "RagContextResult",
    "RagDecisionReason",
    "RagNoContextReason",
    "RagPolicyStage",
    "RagRerankScore",
    "RagRerankingOutcome",
    "RagRerankingReport",
    "RerankerFailurePolicy",
    "RerankingOptions",
    "estimate_tokens",
    "normalise_text",
]
