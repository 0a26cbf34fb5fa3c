"""Each API's request shape, the score mapping to [0, 1], and strict response checks (indexes, scores, shape)."""

from __future__ import annotations

import json
import math

import pytest
from runiq.errors import ProviderResponseError
from runiq.rag.providers import RagAnswerability, RerankerResponseError, RerankResponseViolation

from runiq_rerank_http import BACKENDS, HttpRerankerOptions, RerankBackend, ScoreMapping, sigmoid
from runiq_rerank_http.wire import parse_relevances

QUERY = "remote work policy"
DOCUMENTS = ("The remote work policy allows three days.", "Parking permits.", "Remote only.")


async def test_cohere_request_and_scores(server, open_reranker, make_request) -> None:
    """Cohere v2: model (default rerank-v3.5), query, documents, top_n = all; Bearer key; scores as is."""
    async with open_reranker(RerankBackend.COHERE) as reranker:
        response = await reranker.rerank(make_request(QUERY, *DOCUMENTS))
    [sent] = server.requests
    assert sent.payload == {"query": QUERY, "documents": list(DOCUMENTS), "model": "rerank-v3.5", "top_n": 3}
    assert sent.authorization == f"Bearer {server.api_key}"
    relevances = [r.relevance for r in response.candidates]
    assert relevances == pytest.approx([server.probability(QUERY, d) for d in DOCUMENTS], abs=1e-12)


async def test_jina_request_asks_for_no_documents_back(server, open_reranker, make_request) -> None:
    """Jina returns the documents unless told not to; model defaults to jina-reranker-v2-base-multilingual."""
    async with open_reranker(RerankBackend.JINA) as reranker:
        await reranker.rerank(make_request(QUERY, *DOCUMENTS))
    [sent] = server.requests
    assert sent.payload == {
        "query": QUERY,
        "documents": list(DOCUMENTS),
        "model": "jina-reranker-v2-base-multilingual",
        "top_n": 3,
        "return_documents": False,
    }


async def test_tei_asks_for_logits_and_maps_them_with_the_sigmoid(server, open_reranker, make_request) -> None:
    """TEI: texts, raw_scores=true, truncate=true, no model, no key; relevance = sigmoid(logit)."""
    async with open_reranker(RerankBackend.TEI) as reranker:
        response = await reranker.rerank(make_request(QUERY, *DOCUMENTS))
    [sent] = server.requests
    assert sent.payload == {
        "query": QUERY,
        "texts": list(DOCUMENTS),
        "raw_scores": True,
        "return_text": False,
        "truncate": True,
    }
    assert sent.authorization is None
    expected = [1 / (1 + math.exp(-server.logit(QUERY, d))) for d in DOCUMENTS]
    assert [r.relevance for r in response.candidates] == pytest.approx(expected, abs=1e-12)
    assert response.candidates[0].relevance == pytest.approx(1 / (1 + math.exp(-3.0)))


async def test_tei_with_server_side_sigmoid(server, open_reranker, make_request) -> None:
    """score_mapping="as_is" asks TEI for raw_scores=false and takes its probabilities unchanged: same numbers."""
    async with open_reranker(RerankBackend.TEI, score_mapping="as_is") as reranker:
        response = await reranker.rerank(make_request(QUERY, *DOCUMENTS))
    assert server.requests[0].payload["raw_scores"] is False
    expected = [server.probability(QUERY, d) for d in DOCUMENTS]
    assert [r.relevance for r in response.candidates] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize(
    ("mapping", "raw_scores"), [(ScoreMapping.AS_IS, False), (ScoreMapping.SIGMOID, True)], ids=["as_is", "sigmoid"]
)
async def test_infinity_raw_scores_follow_the_mapping(server, open_reranker, make_request, mapping, raw_scores) -> None:
    """Infinity gets raw_scores=false by default (probabilities), true with the sigmoid mapping; same result."""
    async with open_reranker(RerankBackend.INFINITY, score_mapping=mapping) as reranker:
        response = await reranker.rerank(make_request(QUERY, *DOCUMENTS))
    [sent] = server.requests
    assert sent.payload == {
        "query": QUERY,
        "documents": list(DOCUMENTS),
        "top_n": 3,
        "raw_scores": raw_scores,
        "return_documents": False,
    }
    expected = [server.probability(QUERY, d) for d in DOCUMENTS]
    assert [r.relevance for r in response.candidates] == pytest.approx(expected, abs=1e-12)


async def test_vllm_sends_the_model_only_when_given(server, open_reranker, make_request) -> None:
    """vLLM: query, documents, top_n; ``model`` when configured; a key when one is configured (Bearer)."""
    async with open_reranker(RerankBackend.VLLM) as reranker:
        await reranker.rerank(make_request(QUERY, *DOCUMENTS))
    async with open_reranker(
        RerankBackend.VLLM, model="BAAI/bge-reranker-base", api_key_env="RUNIQ_TEST_RERANK_API_KEY"
    ) as reranker:
        await reranker.rerank(make_request(QUERY, *DOCUMENTS))
    first, second = server.requests
    assert first.payload == {"query": QUERY, "documents": list(DOCUMENTS), "top_n": 3}
    assert first.authorization is None
    assert second.payload["model"] == "BAAI/bge-reranker-base"
    assert second.authorization == f"Bearer {server.api_key}"


@pytest.mark.parametrize("backend", list(RerankBackend), ids=[b.value for b in RerankBackend])
async def test_sorted_results_map_back_by_index(server, open_reranker, make_request, backend) -> None:
    """The APIs answer best first; each relevance lands on the candidate its index names, UNKNOWN answerability."""
    documents = ["Parking permits.", "Remote only.", "The remote work policy allows three days."]
    async with open_reranker(backend) as reranker:
        response = await reranker.rerank(make_request(QUERY, *documents))
    ids = [r.document_id for r in response.candidates]
    assert ids == ["d1.md", "d2.md", "d3.md"]
    relevances = [r.relevance for r in response.candidates]
    assert relevances == pytest.approx([server.probability(QUERY, d) for d in documents], abs=1e-12)
    assert relevances[2] > relevances[1] > relevances[0]
    assert {r.answerability for r in response.candidates} == {RagAnswerability.UNKNOWN}
    assert response.answerability is RagAnswerability.UNKNOWN


def _with(field: str, value: object):
    """A script step that sets ``field`` of the first (best) result item."""

    def change(items: list[dict]) -> list[dict]:
        items[0][field] = value
        return items

    return change


@pytest.mark.parametrize(
    ("backend", "items", "violation"),
    [
        (RerankBackend.COHERE, _with("index", 3), RerankResponseViolation.UNKNOWN_IDENTITY),
        (RerankBackend.TEI, _with("index", -1), RerankResponseViolation.UNKNOWN_IDENTITY),
        (RerankBackend.JINA, lambda items: [*items, dict(items[0])], RerankResponseViolation.DUPLICATE_IDENTITY),
        (
            RerankBackend.INFINITY,
            lambda items: [items[0], items[1] | {"index": items[0]["index"]}, items[2]],
            RerankResponseViolation.DUPLICATE_IDENTITY,
        ),
        (RerankBackend.VLLM, lambda items: items[:2], RerankResponseViolation.MISSING_IDENTITY),
        (RerankBackend.COHERE, _with("relevance_score", 1.5), RerankResponseViolation.RELEVANCE_OUT_OF_RANGE),
        (RerankBackend.JINA, _with("relevance_score", -0.01), RerankResponseViolation.RELEVANCE_OUT_OF_RANGE),
    ],
    ids=["index-past-end", "negative-index", "duplicate", "duplicate-index", "missing", "above-1", "below-0"],
)
async def test_identity_and_range_violations_are_response_errors(
    server, open_reranker, make_request, backend, items, violation
) -> None:
    """An index outside the request, one named twice or never, or an as-is score outside [0, 1]."""
    server.script(server.Scripted(items=items))
    async with open_reranker(backend) as reranker:
        with pytest.raises(RerankerResponseError) as caught:
            await reranker.rerank(make_request(QUERY, *DOCUMENTS))
    assert isinstance(caught.value, ProviderResponseError)
    assert caught.value.violation is violation
    assert len(server.requests) == 1  # a bad answer is not retried


def _options(backend: RerankBackend, **values: object) -> HttpRerankerOptions:
    base = None if BACKENDS[backend].base_url else "http://127.0.0.1:9"
    return HttpRerankerOptions(backend=backend, base_url=base, **values)


def _parse(backend: RerankBackend, payload: object, count: int = 2, **values: object) -> list[float]:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return parse_relevances(body, count, _options(backend, **values), "rerank-http")


@pytest.mark.parametrize(
    "payload",
    [
        b"not json",
        b"[" * 100_000,
        {"results": "nope"},
        {"data": [{"index": 0, "relevance_score": 0.5}]},
        {"results": [{"index": 0}]},
        {"results": [{"index": "0", "relevance_score": 0.5}]},
        {"results": [{"index": 0.0, "relevance_score": 0.5}]},
        {"results": [{"index": True, "relevance_score": 0.5}]},
        {"results": [{"index": 0, "relevance_score": "0.5"}]},
        {"results": [{"index": 0, "relevance_score": None}]},
        {"results": ["0.5"]},
        [{"index": 0, "relevance_score": 0.5}],
    ],
    ids=[
        "not-json",
        "deep-nesting",
        "results-not-list",
        "wrong-key",
        "no-score",
        "string-index",
        "float-index",
        "bool-index",
        "string-score",
        "null-score",
        "item-not-object",
        "bare-list",
    ],
)
def test_malformed_bodies_are_provider_response_errors(payload) -> None:
    """Anything but the documented shape (strict JSON types) is malformed, with a fixed message."""
    with pytest.raises(ProviderResponseError, match="malformed rerank response") as caught:
        _parse(RerankBackend.COHERE, payload)
    assert not isinstance(caught.value, RerankerResponseError)


def test_tei_body_is_a_bare_list() -> None:
    """TEI's documented answer is the list itself, with ``score``; an object wrapping it is malformed."""
    assert _parse(RerankBackend.TEI, [{"index": 1, "score": 0.0}, {"index": 0, "score": 2}]) == [sigmoid(2.0), 0.5]
    with pytest.raises(ProviderResponseError, match="malformed"):
        _parse(RerankBackend.TEI, {"results": [{"index": 0, "score": 0.0}, {"index": 1, "score": 0.0}]})


@pytest.mark.parametrize("score", [b"NaN", b"Infinity", b"-Infinity", b"1" + b"0" * 400])
@pytest.mark.parametrize("mapping", list(ScoreMapping))
def test_non_finite_scores_are_refused_under_either_mapping(score, mapping) -> None:
    """NaN, infinities and integers too large for a float are ``non_finite_relevance``, never mapped."""
    body = b'{"results": [{"index": 0, "relevance_score": ' + score + b'}, {"index": 1, "relevance_score": 0}]}'
    with pytest.raises(RerankerResponseError) as caught:
        _parse(RerankBackend.COHERE, body, score_mapping=mapping)
    assert caught.value.violation is RerankResponseViolation.NON_FINITE_RELEVANCE


def test_sigmoid_maps_any_logit_into_the_unit_interval_in_order() -> None:
    """0 -> 0.5, symmetric, monotonic, no overflow at the extremes, and the same as the textbook formula."""
    assert sigmoid(0.0) == 0.5
    assert sigmoid(-1000.0) == 0.0
    assert sigmoid(1000.0) == 1.0
    logits = [-50.0, -7.5, -1.0, -1e-9, 0.0, 1e-9, 1.0, 7.5, 50.0]
    mapped = [sigmoid(x) for x in logits]
    assert mapped == sorted(mapped)
    assert all(0.0 <= p <= 1.0 for p in mapped)
    for x in logits:
        assert sigmoid(x) + sigmoid(-x) == pytest.approx(1.0)
        assert sigmoid(x) == pytest.approx(1 / (1 + math.exp(-x)))


def test_a_sigmoid_mapping_accepts_logits_outside_the_unit_interval() -> None:
    """Under ``sigmoid`` a score of 4.2 or -3 is a logit, not a range violation."""
    payload = {"results": [{"index": 0, "relevance_score": 4.2}, {"index": 1, "relevance_score": -3}]}
    assert _parse(RerankBackend.VLLM, payload, score_mapping="sigmoid") == [sigmoid(4.2), sigmoid(-3.0)]
    with pytest.raises(RerankerResponseError):
        _parse(RerankBackend.VLLM, payload)
