"""Score semantics: pure rules from a raw provider score to a provider-independent relevance.

Relevance is only produced where the transformation is documented and bounded:

* cosine similarity, higher is better, relevance ``(raw + 1) / 2``;
* Euclidean distance, lower is better, relevance ``1 / (1 + raw)``;
* dot product is unbounded: the raw score is reported as is and relevance is ``None``.

Results are clamped to [0, 1] to absorb floating-point overshoot (a cosine of 1.0000001).
"""

from __future__ import annotations

import math

from runiq.rag._stores.base import DistanceMetric

__all__ = [
    "COSINE_SIMILARITY",
    "DOT_PRODUCT",
    "EUCLIDEAN_DISTANCE",
    "LEXICAL_BM25",
    "higher_is_better",
    "metric_name",
    "relevance",
]

COSINE_SIMILARITY = "cosine-similarity"
EUCLIDEAN_DISTANCE = "euclidean-distance"
DOT_PRODUCT = "dot-product"
LEXICAL_BM25 = "bm25"

_NAMES = {
    DistanceMetric.COSINE: COSINE_SIMILARITY,
    DistanceMetric.EUCLIDEAN: EUCLIDEAN_DISTANCE,
    DistanceMetric.DOT_PRODUCT: DOT_PRODUCT,
}


def metric_name(metric: DistanceMetric) -> str:
    return _NAMES[metric]


def higher_is_better(metric: DistanceMetric) -> bool:
    return metric is not DistanceMetric.EUCLIDEAN


def relevance(metric: DistanceMetric, raw: float) -> float | None:
    """Provider-independent relevance in [0, 1], or ``None`` when no honest mapping exists."""
    if not math.isfinite(raw):
        return None
    if metric is DistanceMetric.COSINE:
        return min(1.0, max(0.0, (raw + 1.0) / 2.0))
    if metric is DistanceMetric.EUCLIDEAN:
        return min(1.0, max(0.0, 1.0 / (1.0 + max(raw, 0.0))))
    return None
