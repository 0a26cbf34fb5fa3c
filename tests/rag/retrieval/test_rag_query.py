"""RagQuery validation: every bad request is a RagValidationError before any provider call."""

from __future__ import annotations

from typing import Any

import pytest

from runiq.rag import RagQuery, RagRetrievalMode, RagValidationError
from runiq.rag._limits import MAX_CANDIDATES
from runiq.rag._retrieval.query import MAX_QUERY_CHARACTERS
from runiq.rag._stores.filters import MetadataFilter


def test_defaults() -> None:
    """mode defaults to None (the index default), top_k to 5, no filters, no candidate depth."""
    query = RagQuery(index_name="docs", text="remote work")
    assert query.mode is None
    assert query.top_k == 5
    assert query.filters is None
    assert query.candidate_depth is None


def test_index_name_is_trimmed() -> None:
    """Surrounding whitespace in the index name is removed."""
    assert RagQuery(index_name="  docs ", text="x").index_name == "docs"


@pytest.mark.parametrize(
    "kwargs",
    [
        pytest.param({"index_name": ""}, id="empty-index"),
        pytest.param({"index_name": "   "}, id="blank-index"),
        pytest.param({"index_name": None}, id="none-index"),
        pytest.param({"text": ""}, id="empty-text"),
        pytest.param({"text": " \n\t"}, id="blank-text"),
        pytest.param({"text": None}, id="none-text"),
        pytest.param({"text": "x" * (MAX_QUERY_CHARACTERS + 1)}, id="too-long"),
        pytest.param({"mode": "lexical"}, id="mode-string"),
        pytest.param({"mode": 1}, id="mode-int"),
        pytest.param({"top_k": 0}, id="top-k-zero"),
        pytest.param({"top_k": -1}, id="top-k-negative"),
        pytest.param({"top_k": 2.5}, id="top-k-float"),
        pytest.param({"top_k": True}, id="top-k-bool"),
        pytest.param({"candidate_depth": 0}, id="depth-zero"),
        pytest.param({"candidate_depth": True}, id="depth-bool"),
        pytest.param({"top_k": MAX_CANDIDATES + 1}, id="top-k-above-maximum"),
        pytest.param({"top_k": 2**63}, id="top-k-past-64-bits"),
        pytest.param({"candidate_depth": MAX_CANDIDATES + 1}, id="depth-above-maximum"),
        pytest.param({"candidate_depth": 2**64}, id="depth-past-64-bits"),
        pytest.param({"filters": {"k": ["list"]}}, id="filter-list-value"),
        pytest.param({"filters": {"": "x"}}, id="filter-empty-key"),
        pytest.param({"filters": {"k": None}}, id="filter-null"),
        pytest.param({"filters": {"k": float("nan")}}, id="filter-nan"),
        pytest.param({"filters": {"k": float("inf")}}, id="filter-inf"),
        pytest.param({"filters": {"k": 2**63}}, id="filter-int-past-64-bits"),
        pytest.param({"filters": {"k": "a\x00"}}, id="filter-nul"),
        pytest.param({"filters": {"k": {"$regex": "a"}}}, id="filter-unknown-operator"),
        pytest.param({"filters": {"k": {"$in": list(range(1_001))}}}, id="filter-in-too-long"),
        pytest.param({"filters": {"k": {"$gt": True}}}, id="filter-range-on-boolean"),
        pytest.param({"filters": {"$or": []}}, id="filter-empty-or"),
    ],
)
def test_invalid_queries_are_rejected(kwargs: dict[str, Any]) -> None:
    """Blank names or text, overlong text, non-enum modes, non-positive limits and bad filters are rejected."""
    base: dict[str, Any] = {"index_name": "docs", "text": "remote work"}
    with pytest.raises(RagValidationError):
        RagQuery(**{**base, **kwargs})


def test_longest_allowed_text_is_accepted() -> None:
    """Text of exactly the maximum length is valid."""
    assert len(RagQuery(index_name="docs", text="x" * MAX_QUERY_CHARACTERS).text) == MAX_QUERY_CHARACTERS


def test_filters_are_frozen_and_empty_filters_mean_none() -> None:
    """Filters are copied read-only; an empty mapping becomes None."""
    filters = {"team": "hr"}
    query = RagQuery(index_name="docs", text="x", filters=filters, mode=RagRetrievalMode.HYBRID)
    filters["team"] = "changed"
    assert dict(query.filters or {}) == {"team": "hr"}
    assert RagQuery(index_name="docs", text="x", filters={}).filters is None


def test_the_maximum_counts_are_accepted() -> None:
    """``top_k`` and ``candidate_depth`` may equal MAX_CANDIDATES."""
    query = RagQuery(index_name="docs", text="x", top_k=MAX_CANDIDATES, candidate_depth=MAX_CANDIDATES)
    assert (query.top_k, query.candidate_depth) == (MAX_CANDIDATES, MAX_CANDIDATES)


def test_hybrid_depth_is_the_override_or_a_capped_multiple_of_top_k() -> None:
    """candidate_depth wins; else top_k * multiplier, never above MAX_CANDIDATES."""
    assert RagQuery(index_name="docs", text="x", top_k=3).hybrid_depth(4) == 12
    assert RagQuery(index_name="docs", text="x", top_k=3, candidate_depth=7).hybrid_depth(4) == 7
    assert RagQuery(index_name="docs", text="x", top_k=MAX_CANDIDATES).hybrid_depth(4) == MAX_CANDIDATES
    assert RagQuery(index_name="docs", text="x", top_k=2).hybrid_depth(10**30) == MAX_CANDIDATES


def test_filter_values_are_normalised_to_plain_types() -> None:
    """Enum members and other subclasses become plain values, so every store sees the same filter."""
    from enum import IntEnum, StrEnum

    class Level(IntEnum):
        HIGH = 3

    class Team(StrEnum):
        HR = "hr"

    filters = RagQuery(index_name="docs", text="x", filters={"level": Level.HIGH, "team": Team.HR}).filters
    assert filters is not None
    assert [(type(v), v) for v in filters.values()] == [(int, 3), (str, "hr")]


def test_operator_filters_are_validated_when_the_query_is_made() -> None:
    """The query holds the validated filter (a MetadataFilter), so a store never sees an unchecked one."""
    filters = {"year": {"$gte": 2020}, "$or": [{"a": 1}, {"b": {"$in": [1]}}]}
    query = RagQuery(index_name="docs", text="x", filters=filters)
    assert isinstance(query.filters, MetadataFilter)
    assert query.filters == {"year": {"$gte": 2020}, "$or": ({"a": 1}, {"b": {"$in": (1,)}})}
