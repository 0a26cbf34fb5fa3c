"""Score semantics: metric names, directions and the documented relevance formulas."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runiq.rag._stores import scoring
from runiq.rag.providers import DistanceMetric

finite = st.floats(allow_nan=False, allow_infinity=False, width=64)


def test_metric_names_and_directions() -> None:
    """Cosine and dot product are higher-is-better, Euclidean distance lower-is-better; names are stable."""
    assert scoring.metric_name(DistanceMetric.COSINE) == "cosine-similarity"
    assert scoring.metric_name(DistanceMetric.EUCLIDEAN) == "euclidean-distance"
    assert scoring.metric_name(DistanceMetric.DOT_PRODUCT) == "dot-product"
    assert scoring.higher_is_better(DistanceMetric.COSINE)
    assert scoring.higher_is_better(DistanceMetric.DOT_PRODUCT)
    assert not scoring.higher_is_better(DistanceMetric.EUCLIDEAN)


@pytest.mark.parametrize(("raw", "expected"), [(1.0, 1.0), (0.0, 0.5), (-1.0, 0.0), (0.5, 0.75), (-0.2, 0.4)])
def test_cosine_relevance_is_raw_plus_one_over_two(raw: float, expected: float) -> None:
    """Cosine relevance is (raw + 1) / 2."""
    assert scoring.relevance(DistanceMetric.COSINE, raw) == pytest.approx(expected)


@pytest.mark.parametrize(("raw", "expected"), [(0.0, 1.0), (1.0, 0.5), (3.0, 0.25), (9.0, 0.1)])
def test_euclidean_relevance_is_one_over_one_plus_raw(raw: float, expected: float) -> None:
    """Euclidean relevance is 1 / (1 + raw)."""
    assert scoring.relevance(DistanceMetric.EUCLIDEAN, raw) == pytest.approx(expected)


@given(finite)
def test_dot_product_never_has_relevance(raw: float) -> None:
    """Dot product is unbounded, so relevance is None for every raw score."""
    assert scoring.relevance(DistanceMetric.DOT_PRODUCT, raw) is None


@given(st.sampled_from([DistanceMetric.COSINE, DistanceMetric.EUCLIDEAN]), finite)
def test_relevance_is_always_within_zero_and_one(metric: DistanceMetric, raw: float) -> None:
    """For any finite raw score, cosine and Euclidean relevance lie in [0, 1]."""
    value = scoring.relevance(metric, raw)
    assert value is not None
    assert 0.0 <= value <= 1.0


@given(st.floats(min_value=-1.0, max_value=1.0), st.floats(min_value=-1.0, max_value=1.0))
def test_cosine_relevance_follows_the_raw_direction(a: float, b: float) -> None:
    """A higher cosine never gets a lower relevance."""
    low, high = sorted((a, b))
    assert scoring.relevance(DistanceMetric.COSINE, low) <= scoring.relevance(DistanceMetric.COSINE, high)  # type: ignore[operator]


@given(st.floats(min_value=0.0, max_value=1e12), st.floats(min_value=0.0, max_value=1e12))
def test_euclidean_relevance_follows_the_raw_direction(a: float, b: float) -> None:
    """A smaller distance never gets a lower relevance."""
    near, far = sorted((a, b))
    assert scoring.relevance(DistanceMetric.EUCLIDEAN, near) >= scoring.relevance(DistanceMetric.EUCLIDEAN, far)  # type: ignore[operator]


@pytest.mark.parametrize("metric", list(DistanceMetric))
@pytest.mark.parametrize("raw", [math.nan, math.inf, -math.inf])
def test_non_finite_raw_scores_have_no_relevance(metric: DistanceMetric, raw: float) -> None:
    """A non-finite raw score never becomes a relevance."""
    assert scoring.relevance(metric, raw) is None


def test_floating_point_overshoot_is_clamped() -> None:
    """A cosine a hair above 1 still maps to relevance 1."""
    assert scoring.relevance(DistanceMetric.COSINE, 1.0000001) == 1.0
    assert scoring.relevance(DistanceMetric.EUCLIDEAN, -1e-9) == 1.0
