"""Context options: documented defaults, validation of every field, enum coercion from configuration."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from runiq.rag import RagConfigurationError
from runiq.rag._context import (
    ContextBudget,
    ContextBudgetUnit,
    DuplicateFilterOptions,
    GroundingOptions,
    NullRelevancePolicy,
    RagContextOptions,
    RerankerFailurePolicy,
    RerankingOptions,
)


def test_defaults_follow_the_reference() -> None:
    """No threshold, lexical-aware null policy, 5 accepted, reranking off (5, 5 s, fallback), 28 672 tokens."""
    options = RagContextOptions()
    assert options.minimum_relevance is None
    assert options.null_relevance_policy is NullRelevancePolicy.ACCEPT_LEXICAL
    assert options.maximum_accepted_results == 5
    assert options.maximum_chunks_per_document is None
    assert options.duplicates == DuplicateFilterOptions(
        exact_content=True, near_duplicate_threshold=0.9, shingle_size=3
    )
    assert options.reranking == RerankingOptions(
        enabled=False, maximum_candidates=5, timeout_seconds=5.0, on_failure=RerankerFailurePolicy.USE_RETRIEVAL_ORDER
    )
    assert options.grounding == GroundingOptions(require_answerable=False, exclude_not_answerable=False)
    assert options.budget == ContextBudget(
        maximum=28_672, unit=ContextBudgetUnit.APPROXIMATE_TOKENS, per_chunk_overhead=0
    )


def test_options_are_frozen() -> None:
    """Options are immutable values; a change is a copy."""
    options = RagContextOptions()
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.maximum_accepted_results = 3  # type: ignore[misc]
    assert dataclasses.replace(options, maximum_accepted_results=3).maximum_accepted_results == 3


@pytest.mark.parametrize("value", [0.0, 0.5, 1.0, 1])
def test_minimum_relevance_accepts_the_closed_unit_interval(value: float) -> None:
    """Inclusive [0, 1]."""
    assert RagContextOptions(minimum_relevance=value).minimum_relevance == value


@pytest.mark.parametrize("value", [-0.01, 1.01, math.nan, math.inf, True, "0.5"])
def test_minimum_relevance_rejects_everything_else(value: Any) -> None:
    """Non-finite, outside [0, 1], bools and strings are configuration errors."""
    with pytest.raises(RagConfigurationError, match="minimum_relevance"):
        RagContextOptions(minimum_relevance=value)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"maximum_accepted_results": 0}, "maximum_accepted_results"),
        ({"maximum_accepted_results": 1001}, "maximum_accepted_results"),
        ({"maximum_accepted_results": True}, "maximum_accepted_results"),
        ({"maximum_accepted_results": 2.0}, "maximum_accepted_results"),
        ({"maximum_chunks_per_document": 0}, "maximum_chunks_per_document"),
        ({"null_relevance_policy": "sometimes"}, "null_relevance_policy"),
        ({"null_relevance_policy": 1}, "null_relevance_policy"),
        ({"duplicates": None}, "duplicates"),
        ({"reranking": {"enabled": True}}, "reranking"),
        ({"grounding": None}, "grounding"),
        ({"budget": 100}, "budget"),
    ],
)
def test_invalid_top_level_options_are_rejected(kwargs: dict[str, Any], field: str) -> None:
    """Every field is validated on construction; the message names the field."""
    with pytest.raises(RagConfigurationError, match=field):
        RagContextOptions(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"maximum_candidates": 0}, "maximum_candidates"),
        ({"maximum_candidates": 1001}, "maximum_candidates"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"timeout_seconds": -1.0}, "timeout_seconds"),
        ({"timeout_seconds": 301}, "timeout_seconds"),
        ({"timeout_seconds": math.nan}, "timeout_seconds"),
        ({"timeout_seconds": True}, "timeout_seconds"),
        ({"on_failure": "retry"}, "on_failure"),
        ({"enabled": "yes"}, "enabled"),
    ],
)
def test_invalid_reranking_options_are_rejected(kwargs: dict[str, Any], field: str) -> None:
    """Candidate limit 1..1000, timeout in (0, 300] seconds, a defined failure policy."""
    with pytest.raises(RagConfigurationError, match=field):
        RerankingOptions(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"near_duplicate_threshold": 0.0}, "near_duplicate_threshold"),
        ({"near_duplicate_threshold": 1.5}, "near_duplicate_threshold"),
        ({"near_duplicate_threshold": math.nan}, "near_duplicate_threshold"),
        ({"shingle_size": 0}, "shingle_size"),
        ({"exact_content": 1}, "exact_content"),
    ],
)
def test_invalid_duplicate_options_are_rejected(kwargs: dict[str, Any], field: str) -> None:
    """Near-duplicate threshold in (0, 1] or None; shingle size 1..16."""
    with pytest.raises(RagConfigurationError, match=field):
        DuplicateFilterOptions(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"maximum": 0}, "maximum"),
        ({"maximum": 1.5}, "maximum"),
        ({"per_chunk_overhead": -1}, "per_chunk_overhead"),
        ({"unit": "words"}, "unit"),
    ],
)
def test_invalid_budget_options_are_rejected(kwargs: dict[str, Any], field: str) -> None:
    """A positive integer maximum, a non-negative overhead, a defined unit."""
    with pytest.raises(RagConfigurationError, match=field):
        ContextBudget(**kwargs)


def test_grounding_flags_must_be_bools() -> None:
    """Grounding flags are explicit bools."""
    with pytest.raises(RagConfigurationError):
        GroundingOptions(require_answerable=1)  # type: ignore[arg-type]


def test_string_values_from_configuration_are_coerced() -> None:
    """Configuration files give strings; they become the enum members."""
    options = RagContextOptions(
        null_relevance_policy="reject",  # type: ignore[arg-type]
        reranking=RerankingOptions(enabled=True, on_failure="fail"),  # type: ignore[arg-type]
        budget=ContextBudget(unit="characters", maximum=100),  # type: ignore[arg-type]
    )
    assert options.null_relevance_policy is NullRelevancePolicy.REJECT
    assert options.reranking.on_failure is RerankerFailurePolicy.FAIL
    assert options.budget.unit is ContextBudgetUnit.CHARACTERS


def test_require_answerable_needs_reranking() -> None:
    """Only a reranker produces the answerability signal, so requiring it without one is a contradiction."""
    with pytest.raises(RagConfigurationError, match="require_answerable"):
        RagContextOptions(grounding=GroundingOptions(require_answerable=True))
    RagContextOptions(grounding=GroundingOptions(require_answerable=True), reranking=RerankingOptions(enabled=True))
