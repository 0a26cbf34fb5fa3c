"""POST {base}/api/rag/indexes/{index_name}/query: the contract runiq query --server uses, its limits and
its fixed errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

import httpx
import pytest

from runiq.cli.output import HitOutput, ServerQueryAnswer
from runiq.cli.remote import query_server
from runiq.errors import RetrievalError, RetrievalErrorCode
from runiq.hosting import Host
from runiq.rag import RagIngestionManager, RagQuery, RagRetrievalMode, RagRetriever
from runiq.rag.testing import CANARY
from runiq_dashboard import DashboardCredential, DashboardOptions, DashboardRole, create_dashboard_app

QUERY = "/runiq/api/rag/indexes/docs/query"
QUERY_KEY = "query-key-0123456789abcdef"
INVALID = {"code": "InvalidRequest", "message": "The request is not valid.", "activeOperation": None}
HIT_FIELDS = set(HitOutput.model_fields)


@pytest.fixture
async def query_api(host: Host, client_for) -> httpx.AsyncClient:  # type: ignore[no-untyped-def]
    """A loopback client of a dashboard with querying on, over an ingested 'docs' index."""
    await host.services.get(RagIngestionManager).run("docs")
    return client_for(create_dashboard_app(host, DashboardOptions(enable_query=True)))  # type: ignore[no-any-return]


async def test_a_hybrid_query_answers_hits_with_scores_provenance_and_text(query_api: httpx.AsyncClient) -> None:
    """The answer is runiq query's JSON document: rank, both sources' ranks and raw scores, chunk text."""
    response = await query_api.post(QUERY, json={"text": "remote work handbook", "mode": "hybrid", "top_k": 2})
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"version", "index_name", "mode", "hits"}
    assert (body["version"], body["index_name"], body["mode"]) == (1, "docs", "hybrid")
    assert [hit["rank"] for hit in body["hits"]] == [1, 2]
    top = body["hits"][0]
    assert set(top) == HIT_FIELDS
    assert top["document_id"] == "handbook.md"
    assert "Remote work" in top["content"]
    assert top["metric"] == "cosine-similarity"
    assert top["higher_is_better"] is True
    assert 0.0 <= top["relevance"] <= 1.0
    provenance = top["provenance"]
    assert provenance["mode"] == "hybrid"
    assert provenance["semantic"]["rank"] >= 1
    assert provenance["lexical"] == {"rank": 1, "raw_score": provenance["lexical"]["raw_score"], "metric": "bm25"}
    assert provenance["fused_rank"] == 1
    assert provenance["fused_score"] > 0
    answer = ServerQueryAnswer.model_validate_json(response.content)  # what runiq query --server parses
    assert answer.mode is RagRetrievalMode.HYBRID
    assert answer.hits[0].content == top["content"]


async def test_without_a_mode_the_index_default_runs(query_api: httpx.AsyncClient) -> None:
    """The CLI omits mode and filters unless given: the index's default mode (semantic here) answers."""
    response = await query_api.post(QUERY, json={"text": "policy", "top_k": 5})
    assert response.status_code == 200
    assert response.json()["mode"] == "semantic"
    assert len(response.json()["hits"]) == 2
    assert all(hit["provenance"]["lexical"] is None for hit in response.json()["hits"])


async def test_filters_select_by_metadata(query_api: httpx.AsyncClient) -> None:
    """Metadata equality filters, all of which must match."""
    body = {"text": "policy handbook", "mode": "lexical", "filters": {"title": "Handbook", "extension": "md"}}
    hits = (await query_api.post(QUERY, json=body)).json()["hits"]
    assert [hit["document_id"] for hit in hits] == ["handbook.md"]
    body["filters"] = {"title": "nothing"}
    assert (await query_api.post(QUERY, json=body)).json()["hits"] == []


BAD_BODIES = [
    ("not-json", b"{text: 1"),
    ("empty", b""),
    ("array", b"[]"),
    ("no-text", json.dumps({"top_k": 3}).encode()),
    ("blank-text", json.dumps({"text": f"   {' ' * 10}"}).encode()),
    ("text-too-long", json.dumps({"text": CANARY + "x" * 16_384}).encode()),
    ("text-not-string", json.dumps({"text": 5}).encode()),
    ("top-k-zero", json.dumps({"text": CANARY, "top_k": 0}).encode()),
    ("top-k-too-big", json.dumps({"text": CANARY, "top_k": 10_001}).encode()),
    ("top-k-string", json.dumps({"text": CANARY, "top_k": "5"}).encode()),
    ("top-k-bool", json.dumps({"text": CANARY, "top_k": True}).encode()),
    ("top-k-float", json.dumps({"text": CANARY, "top_k": 2.5}).encode()),
    ("mode", json.dumps({"text": CANARY, "mode": "fuzzy"}).encode()),
    ("unknown-field", json.dumps({"text": CANARY, "candidate_depth": 5}).encode()),
    ("filter-list", json.dumps({"text": CANARY, "filters": {"title": [CANARY]}}).encode()),
    ("filter-null", json.dumps({"text": CANARY, "filters": {"title": None}}).encode()),
    ("filter-nul", json.dumps({"text": CANARY, "filters": {"ti\u0000tle": "x"}}).encode()),
    ("filter-huge-int", json.dumps({"text": CANARY, "filters": {"year": 2**63}}).encode()),
    ("filter-nan", b'{"text": "x", "filters": {"n": NaN}}'),
    ("too-many-filters", json.dumps({"text": CANARY, "filters": {f"k{n}": n for n in range(33)}}).encode()),
    ("blank-filter-key", json.dumps({"text": CANARY, "filters": {"": "x"}}).encode()),
]


@pytest.mark.parametrize("body", [b for _, b in BAD_BODIES], ids=[name for name, _ in BAD_BODIES])
async def test_invalid_queries_are_a_fixed_422(query_api: httpx.AsyncClient, body: bytes) -> None:
    """Body validation and RagValidationError alike: one fixed answer that repeats nothing of the request."""
    response = await query_api.post(QUERY, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 422
    assert response.json() == INVALID
    assert CANARY not in response.text


async def test_semantic_search_on_an_index_without_embedding_is_422(query_api: httpx.AsyncClient) -> None:
    """'broken' has no embedding: RagValidationError, mapped to the fixed 422."""
    response = await query_api.post("/runiq/api/rag/indexes/broken/query", json={"text": "x", "mode": "semantic"})
    assert response.status_code == 422
    assert response.json() == INVALID


async def test_an_index_never_ingested_is_409_and_an_unknown_one_404(query_api: httpx.AsyncClient) -> None:
    response = await query_api.post("/runiq/api/rag/indexes/nightly/query", json={"text": "nightly"})
    assert response.status_code == 409
    assert response.json()["code"] == "RagIndexNotIngested"
    response = await query_api.post("/runiq/api/rag/indexes/missing/query", json={"text": "x"})
    assert response.status_code == 404
    assert response.json()["code"] == "RagIndexNotFound"


async def _chunks(total: int) -> AsyncIterator[bytes]:
    yield b'{"text": "'
    for _ in range(total // 1024):
        yield b"x" * 1024
    yield b'"}'


async def test_bodies_over_256_kib_are_413_whether_declared_or_streamed(query_api: httpx.AsyncClient) -> None:
    """A Content-Length over the cap is refused unread; a chunked body is cut off at the cap."""
    declared = await query_api.post(QUERY, json={"text": "x" * 300_000})
    assert declared.status_code == 413
    assert declared.json()["code"] == "RequestTooLarge"
    streamed = await query_api.post(QUERY, content=_chunks(400_000), headers={"Content-Type": "application/json"})
    assert streamed.status_code == 413
    fits = await query_api.post(QUERY, content=_chunks(10_000), headers={"Content-Type": "application/json"})
    assert fits.status_code == 200


async def test_queries_past_the_rate_limit_are_429_with_retry_after(host: Host, client_for) -> None:  # type: ignore[no-untyped-def]
    """query_rate_limit per minute, all callers together; refused queries are not run."""
    await host.services.get(RagIngestionManager).run("docs")
    api = client_for(create_dashboard_app(host, DashboardOptions(enable_query=True, query_rate_limit=2)))
    body = {"text": "policy", "mode": "lexical"}
    assert [(await api.post(QUERY, json=body)).status_code for _ in range(2)] == [200, 200]
    refused = await api.post(QUERY, json=body)
    assert refused.status_code == 429
    assert refused.json()["code"] == "RateLimited"
    assert 1 <= int(refused.headers["retry-after"]) <= 30


@pytest.mark.parametrize(
    ("code", "status", "problem"),
    [
        (RetrievalErrorCode.EMBEDDING_FAILED, 503, "RetrievalFailed"),
        (RetrievalErrorCode.VECTOR_STORE_QUERY_FAILED, 503, "RetrievalFailed"),
        (RetrievalErrorCode.LEXICAL_NOT_SUPPORTED, 422, "LexicalNotSupported"),
    ],
)
async def test_retrieval_failures_are_fixed_problems(
    query_api: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, code: RetrievalErrorCode, status: int, problem: str
) -> None:
    async def failing(self: RagRetriever, query: RagQuery) -> object:
        raise RetrievalError(code, f"docs {CANARY}", cause_type="CanaryError")

    monkeypatch.setattr(RagRetriever, "retrieve", failing)
    response = await query_api.post(QUERY, json={"text": "policy"})
    assert response.status_code == status
    assert response.json()["code"] == problem
    assert CANARY not in response.text


async def test_runiq_query_server_reads_the_answer(server_factory) -> None:  # type: ignore[no-untyped-def]
    """The CLI's client against a real server: a bearer key with the query role and no Origin header."""
    operate_key = "operate-key-0123456789abcdef"
    options = DashboardOptions(
        credentials=(
            DashboardCredential(name="cli", secret=QUERY_KEY, roles=frozenset({DashboardRole.QUERY})),
            DashboardCredential(name="ops", secret=operate_key, roles=frozenset({DashboardRole.OPERATE})),
        ),
        enable_query=True,
    )
    server = server_factory(options).start()
    async with httpx.AsyncClient(base_url=server.url, headers={"X-API-Key": operate_key}) as operator:
        assert (await operator.post("api/rag/indexes/broken/ingestion/start")).status_code == 202
        for _ in range(100):
            if (await operator.get("api/rag/indexes/broken/status")).json()["activeOperation"] is None:
                break
            await asyncio.sleep(0.1)
    request = RagQuery(index_name="broken", text="good", mode=RagRetrievalMode.LEXICAL, top_k=3)
    output = await asyncio.to_thread(query_server, server.url, request, api_key=QUERY_KEY)
    assert output.mode is RagRetrievalMode.LEXICAL
    assert [hit.document_id for hit in output.hits] == ["good.md"]
    assert CANARY in output.hits[0].content
    assert output.hits[0].provenance.lexical is not None
    assert output.hits[0].provenance.lexical.rank == 1
