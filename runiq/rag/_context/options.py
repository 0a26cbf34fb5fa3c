"""Options of the context policy path. Frozen, validated on construction, plain values only.

Defaults follow the .NET reference (``spec/reference-behaviours.md`` 3.1) where it has one:
at most 5 accepted results, reranking off (5 candidates, 5 s timeout, fall back to retrieval order),
and a budget of 28 672 approximate tokens (its 32 768-token context minus the 4 096-token response
reserve). Egress approval is *not* an option here: a request must not be able to widen where content
goes (see :class:`~runiq.rag._reranking.RerankerRegistration`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TypeVar

from runiq.errors import RagConfigurationError
from runiq.rag._reranking.types import MAX_RERANK_CANDIDATES

__all__ = [
    "MAX_ACCEPTED_RESULTS",
    "MAX_RERANK_TIMEOUT_SECONDS",
    "ContextBudget",
    "ContextBudgetUnit",
    "DuplicateFilterOptions",
    "GroundingOptions",
    "NullRelevancePolicy",
    "RagContextOptions",
    "RerankerFailurePolicy",
    "RerankingOptions",
]

MAX_ACCEPTED_RESULTS = 1000
MAX_RERANK_TIMEOUT_SECONDS = 300.0

E = TypeVar("E", bound=StrEnum)


def _enum(kind: type[E], value: object, name: str) -> E:
    """Coerce a member or its string value (configuration files); anything else is an error."""
    if isinstance(value, kind):
        return value
    if isinstance(value, str) and value in {m.value for m in kind}:
        return kind(value)
    choices = ", ".join(m.value for m in kind)
    raise RagConfigurationError(f"{name} must be one of: {choices}.")


def _int(value: object, name: str, *, minimum: int, maximum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        raise RagConfigurationError(f"{name} must be an integer from {minimum} to {maximum}.")


def _fraction(value: object, name: str, *, allow_zero: bool = True) -> None:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0.0 <= value <= 1.0
        or (not allow_zero and value == 0.0)
    ):
        bound = "[0, 1]" if allow_zero else "(0, 1]"
        raise RagConfigurationError(f"{name} must be a finite number in {bound}.")


class NullRelevancePolicy(StrEnum):
    """What acceptance does with a hit whose ``relevance`` is ``None`` (lexical-only hits, dot product)."""

    ACCEPT = "accept"  # accept it; the relevance threshold cannot apply
    REJECT = "reject"  # reject it as ``relevance_unavailable``
    # Accept when the hit has lexical evidence (a lexical rank), reject an unbounded semantic-only score.
    # The default, and the .NET rule (a dot-product hit is rejected, a lexical one accepted).
    ACCEPT_LEXICAL = "accept_lexical"


class RerankerFailurePolicy(StrEnum):
    USE_RETRIEVAL_ORDER = "use_retrieval_order"  # continue with the accepted order; outcome ``fallback``
    FAIL = "fail"  # raise RerankingFailedError; no context


class ContextBudgetUnit(StrEnum):
    CHARACTERS = "characters"  # Unicode code points of the chunk content
    # Deterministic estimate, no model: each maximal run of letters/digits counts 1, every other
    # non-whitespace character counts 1, whitespace 0 (the .NET estimator).
    APPROXIMATE_TOKENS = "approximate_tokens"


@dataclass(frozen=True, slots=True, kw_only=True)
class DuplicateFilterOptions:
    """Duplicate filtering. Identity duplicates are always rejected.

    ``exact_content``: reject content equal, after normalisation (NFKC, case-fold, whitespace runs
    collapsed, trimmed), to an accepted candidate's. ``near_duplicate_threshold``: reject content whose
    word ``shingle_size``-shingle Jaccard similarity to an accepted candidate's is at least this value
    (``None`` turns it off). 0.9 catches re-ingested copies with small edits (a changed date, a typo)
    while leaving different sections of one template alone.
    """

    exact_content: bool = True
    near_duplicate_threshold: float | None = 0.9
    shingle_size: int = 3

    def __post_init__(self) -> None:
        if not isinstance(self.exact_content, bool):
            raise RagConfigurationError("DuplicateFilterOptions.exact_content must be a bool.")
        if self.near_duplicate_threshold is not None:
            _fraction(
                self.near_duplicate_threshold, "DuplicateFilterOptions.near_duplicate_threshold", allow_zero=False
            )
        _int(self.shingle_size, "DuplicateFilterOptions.shingle_size", minimum=1, maximum=16)


@dataclass(frozen=True, slots=True, kw_only=True)
class RerankingOptions:
    """Optional second-stage reranking of the accepted candidates.

    The first ``maximum_candidates`` accepted candidates are sent; the rest keep their order after them.
    ``timeout_seconds`` bounds the call (``asyncio.timeout``). ``on_failure`` decides what a timeout,
    an exception, an invalid response, a missing or an unapproved reranker do.
    """

    enabled: bool = False
    maximum_candidates: int = 5
    timeout_seconds: float = 5.0
    on_failure: RerankerFailurePolicy = RerankerFailurePolicy.USE_RETRIEVAL_ORDER

    def __post_init__(self) -> None:
        if not isinstance(self.enabled, bool):
            raise RagConfigurationError("RerankingOptions.enabled must be a bool.")
        _int(self.maximum_candidates, "RerankingOptions.maximum_candidates", minimum=1, maximum=MAX_RERANK_CANDIDATES)
        timeout = self.timeout_seconds
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not math.isfinite(timeout)
            or not 0 < timeout <= MAX_RERANK_TIMEOUT_SECONDS
        ):
            raise RagConfigurationError(
                f"RerankingOptions.timeout_seconds must be greater than 0 and at most {MAX_RERANK_TIMEOUT_SECONDS:g}."
            )
        object.__setattr__(
            self, "on_failure", _enum(RerankerFailurePolicy, self.on_failure, "RerankingOptions.on_failure")
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GroundingOptions:
    """Enforcement of the reranker's answerability signal.

    ``require_answerable``: return context only when reranking succeeded and the aggregate answerability
    is ``ANSWERABLE``; otherwise the outcome is ``not_grounded`` and nothing is selected (``UNKNOWN``
    does not count, and a fallback has no signal). Needs reranking enabled.
    ``exclude_not_answerable``: drop candidates the reranker marked ``NOT_ANSWERABLE`` one by one.
    """

    require_answerable: bool = False
    exclude_not_answerable: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.require_answerable, bool) or not isinstance(self.exclude_not_answerable, bool):
            raise RagConfigurationError("GroundingOptions flags must be bools.")


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextBudget:
    """How much chunk content the context may hold. Chunks are never truncated.

    Selection walks the final order and takes each chunk whose size plus ``per_chunk_overhead`` still
    fits, skipping (not stopping at) one that does not, so the result is deterministic. The budget
    covers retrieved content only: reserve room for instructions, the question and the answer yourself.
    """

    maximum: int = 28_672
    unit: ContextBudgetUnit = ContextBudgetUnit.APPROXIMATE_TOKENS
    per_chunk_overhead: int = 0

    def __post_init__(self) -> None:
        _int(self.maximum, "ContextBudget.maximum", minimum=1, maximum=100_000_000)
        _int(self.per_chunk_overhead, "ContextBudget.per_chunk_overhead", minimum=0, maximum=100_000)
        object.__setattr__(self, "unit", _enum(ContextBudgetUnit, self.unit, "ContextBudget.unit"))


@dataclass(frozen=True, slots=True, kw_only=True)
class RagContextOptions:
    """Everything the policy path decides after retrieval. See :class:`~runiq.rag._context.RagContextAssembler`.

    ``minimum_relevance`` (inclusive, [0, 1]) applies only to hits that have a relevance;
    ``null_relevance_policy`` decides the others. ``maximum_chunks_per_document`` bounds how many chunks
    of one document are accepted (``None``: no bound), so one long document cannot fill every slot.
    """

    minimum_relevance: float | None = None
    null_relevance_policy: NullRelevancePolicy = NullRelevancePolicy.ACCEPT_LEXICAL
    duplicates: DuplicateFilterOptions = DuplicateFilterOptions()
    maximum_accepted_results: int = 5
    maximum_chunks_per_document: int | None = None
    reranking: RerankingOptions = RerankingOptions()
    grounding: GroundingOptions = GroundingOptions()
    budget: ContextBudget = ContextBudget()

    def __post_init__(self) -> None:
        if self.minimum_relevance is not None:
            _fraction(self.minimum_relevance, "RagContextOptions.minimum_relevance")
        object.__setattr__(
            self,
            "null_relevance_policy",
            _enum(NullRelevancePolicy, self.null_relevance_policy, "RagContextOptions.null_relevance_policy"),
        )
        _int(
            self.maximum_accepted_results,
            "RagContextOptions.maximum_accepted_results",
            minimum=1,
            maximum=MAX_ACCEPTED_RESULTS,
        )
        if self.maximum_chunks_per_document is not None:
            _int(
                self.maximum_chunks_per_document,
                "RagContextOptions.maximum_chunks_per_document",
                minimum=1,
                maximum=MAX_ACCEPTED_RESULTS,
            )
        for name, kind in (
            ("duplicates", DuplicateFilterOptions),
            ("reranking", RerankingOptions),
            ("grounding", GroundingOptions),
            ("budget", ContextBudget),
        ):
            if not isinstance(getattr(self, name), kind):
                raise RagConfigurationError(f"RagContextOptions.{name} must be a {kind.__name__}.")
        if self.grounding.require_answerable and not self.reranking.enabled:
            raise RagConfigurationError(
                "GroundingOptions.require_answerable needs reranking enabled: "
                "only a reranker gives the answerability signal."
            )
