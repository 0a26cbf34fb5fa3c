"""Request bodies and response parsing for each backend (see :mod:`runiq_rerank_http.backends`).

Parsing is strict and all-or-nothing: one relevance per requested document, in request order, or a
:class:`~runiq.rag.ProviderResponseError` with a fixed message. A result naming an index outside the
request is :class:`~runiq.rag.RerankerResponseError` ``unknown_identity``, an index named twice
``duplicate_identity``, a missing one ``missing_identity``; a NaN or infinite score
``non_finite_relevance``; an ``as_is`` score outside [0, 1] ``relevance_out_of_range``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, ValidationError
from runiq.errors import ProviderResponseError
from runiq.rag.providers import RerankerResponseError, RerankResponseViolation

from runiq_rerank_http.backends import RerankBackend
from runiq_rerank_http.options import HttpRerankerOptions
from runiq_rerank_http.scores import ScoreMapping, sigmoid

__all__ = ["parse_relevances", "request_body"]


def request_body(options: HttpRerankerOptions, query: str, documents: Sequence[str]) -> dict[str, Any]:
    """The JSON body of one rerank request for ``documents`` (a batch)."""
    spec, backend = options.spec, options.backend
    body: dict[str, Any] = {"query": query, spec.texts_field: list(documents)}
    model = options.effective_model
    if model is not None:
        body["model"] = model
    raw_scores = options.effective_mapping is ScoreMapping.SIGMOID
    if backend is RerankBackend.TEI:
        body |= {"raw_scores": raw_scores, "return_text": False, "truncate": True}
        return body
    body["top_n"] = len(documents)
    if backend is RerankBackend.JINA:
        body["return_documents"] = False
    elif backend is RerankBackend.INFINITY:
        body |= {"raw_scores": raw_scores, "return_documents": False}
    return body


class _Result(BaseModel):
    # Strict: an index must be a JSON integer (not 1.0, "1" or true); a score a JSON number.
    model_config = ConfigDict(strict=True, extra="ignore", hide_input_in_errors=True)

    index: StrictInt
    score: StrictFloat | StrictInt


def _malformed(provider: str) -> ProviderResponseError:
    return ProviderResponseError(provider, "the provider returned a malformed rerank response")


def _results(body: bytes, options: HttpRerankerOptions) -> list[_Result] | None:
    """The result items, or ``None`` when the body is not the documented shape."""
    spec = options.spec
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        return None
    if spec.results_field is None:
        items = payload
    else:
        items = payload.get(spec.results_field) if isinstance(payload, dict) else None
    if not isinstance(items, list):
        return None
    parsed = []
    for item in items:
        if not isinstance(item, dict) or spec.score_field not in item:
            return None
        try:
            parsed.append(_Result.model_validate({"index": item.get("index"), "score": item[spec.score_field]}))
        except ValidationError:
            return None
    return parsed


def _relevance(value: float, mapping: ScoreMapping) -> float | RerankResponseViolation:
    try:
        score = float(value)
    except OverflowError:  # a JSON integer too large for a float
        return RerankResponseViolation.NON_FINITE_RELEVANCE
    if not math.isfinite(score):
        return RerankResponseViolation.NON_FINITE_RELEVANCE
    if mapping is ScoreMapping.SIGMOID:
        return sigmoid(score)
    if not 0.0 <= score <= 1.0:
        return RerankResponseViolation.RELEVANCE_OUT_OF_RANGE
    return score


def parse_relevances(body: bytes, count: int, options: HttpRerankerOptions, provider: str) -> list[float]:
    """One relevance in [0, 1] per requested document, in request order.

    Raises:
        ProviderResponseError: the body is not JSON or not the backend's documented shape.
        RerankerResponseError: an unknown, duplicate or missing index, or a score that cannot be mapped.
    """
    results = _results(body, options)
    if results is None:
        raise _malformed(provider)
    relevances: list[float | None] = [None] * count
    for result in results:
        if not 0 <= result.index < count:
            raise RerankerResponseError(provider, RerankResponseViolation.UNKNOWN_IDENTITY)
        if relevances[result.index] is not None:
            raise RerankerResponseError(provider, RerankResponseViolation.DUPLICATE_IDENTITY)
        relevance = _relevance(result.score, options.effective_mapping)
        if isinstance(relevance, RerankResponseViolation):
            raise RerankerResponseError(provider, relevance)
        relevances[result.index] = relevance
    complete = [r for r in relevances if r is not None]
    if len(complete) != count:
        raise RerankerResponseError(provider, RerankResponseViolation.MISSING_IDENTITY)
    return complete
