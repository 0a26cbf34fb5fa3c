"""Real rerank HTTP servers on 127.0.0.1 (Starlette under uvicorn, in a thread), one per session.

One app serves the five APIs under a prefix each (``/cohere/v2/rerank``, ``/jina/v1/rerank``,
``/tei/rerank``, ``/infinity/rerank``, ``/vllm/v1/rerank``), each with its documented request and
response shape: Cohere and Jina need ``model`` and a key, TEI answers a bare list and refuses more than
32 texts (its default ``--max-client-batch-size``), results come back sorted by score (not in request
order). Scores are a logit ``6 * overlap - 3``, where overlap is runiq's lexical-overlap relevance, so a
candidate restating the query outranks an unrelated one; the APIs that return probabilities return its
sigmoid, TEI the logit itself when ``raw_scores`` is true.

Each request can be scripted (status, headers, delay, a raw body, a change to the result items), and
every request is recorded. Error bodies echo the query, the documents and the presented key, as real
providers' bodies may, so the tests prove nobody copies them.
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import pytest
from runiq.rag._reranking import LexicalOverlapReranker
from runiq.rag.providers import RagRerankCandidate, RagRerankRequest
from runiq.rag.testing import CANARY
from runiq.rag.testing.loopback import Reply, ScriptedFakeServer, serve_on_loopback
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from runiq_rerank_http import HttpReranker, HttpRerankerOptions, RerankBackend
from runiq_rerank_http.plugin import open_http_reranker

API_KEY = "sk-runiq-test-KEYCANARY-91c2d7e4"
KEY_ENV = "RUNIQ_TEST_RERANK_API_KEY"
TEI_MAX_CLIENT_BATCH = 32
PATHS = {
    RerankBackend.COHERE: "/cohere/v2/rerank",
    RerankBackend.JINA: "/jina/v1/rerank",
    RerankBackend.TEI: "/tei/rerank",
    RerankBackend.INFINITY: "/infinity/rerank",
    RerankBackend.VLLM: "/vllm/v1/rerank",
}
KEYED = {RerankBackend.COHERE, RerankBackend.JINA}

_overlap = LexicalOverlapReranker()


@pytest.fixture
def canary() -> str:
    """runiq's canary string (pytest_plugins is only allowed in the rootdir conftest)."""
    return CANARY


def logit(query: str, document: str) -> float:
    """The fake model: 6 * (share of query terms in the document) - 3, in [-3, 3]."""
    relevance, _ = _overlap.score(_overlap.terms(query), document)
    return 6.0 * relevance - 3.0


def probability(query: str, document: str) -> float:
    return 1.0 / (1.0 + math.exp(-logit(query, document)))


@dataclass
class Scripted(Reply):
    """How the server answers one request (the next one not yet answered)."""

    items: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None


@dataclass(frozen=True)
class Recorded:
    backend: RerankBackend
    payload: dict[str, Any]
    authorization: str | None

    @property
    def documents(self) -> list[str]:
        return list(self.payload.get("texts" if self.backend is RerankBackend.TEI else "documents", []))


class FakeRerankServer(ScriptedFakeServer[Scripted]):
    """Tests reach the helpers through the fixture (conftest modules are not importable by name)."""

    Scripted = Scripted
    api_key = API_KEY
    logit = staticmethod(logit)
    probability = staticmethod(probability)

    def __init__(self) -> None:
        super().__init__(Scripted)
        self.requests: list[Recorded] = []
        routes = [Route(path, self._handler(backend), methods=["POST"]) for backend, path in PATHS.items()]
        self.app = Starlette(routes=routes)

    def url(self, backend: RerankBackend) -> str:
        """The base_url a client is given (the backend's own path is appended by the client)."""
        return f"http://127.0.0.1:{self.port}/{backend.value}"

    def reset(self) -> None:
        super().reset()
        self.requests.clear()

    def _handler(self, backend: RerankBackend) -> Callable[[Request], Any]:
        async def handle(request: Request) -> Response:
            payload = await request.json()
            authorization = request.headers.get("authorization")
            self.requests.append(Recorded(backend, payload, authorization))
            reply = await self.next_reply()
            return _answer(backend, payload, authorization, reply)

        return handle


def _echo(payload: dict[str, Any], authorization: str | None) -> str:
    """What a careless provider puts in an error message: the input and the presented key."""
    return f"failed on {payload!r} with {authorization}"


def _answer(backend: RerankBackend, payload: dict[str, Any], authorization: str | None, reply: Scripted) -> Response:
    keyed = backend in KEYED or authorization is not None
    if keyed and authorization != f"Bearer {API_KEY}":
        return JSONResponse({"message": _echo(payload, authorization)}, status_code=401)
    if reply.status != 200:
        return JSONResponse({"message": _echo(payload, authorization)}, status_code=reply.status, headers=reply.headers)
    if reply.body is not None:
        return Response(reply.body, media_type="application/json")
    problem = _invalid(backend, payload)
    if problem is not None:
        return JSONResponse({"message": f"{problem}: {payload!r}"}, status_code=problem_status(problem))
    items = _items(backend, payload)
    if reply.items is not None:
        items = reply.items(items)
    if backend is RerankBackend.TEI:
        return JSONResponse(items)
    usage = {"prompt_tokens": 1, "total_tokens": 1}
    return JSONResponse(
        {"id": "rerank-1", "model": payload.get("model", "served-model"), "results": items, "usage": usage}
    )


def problem_status(problem: str) -> int:
    return 413 if problem == "batch size too large" else 422


def _invalid(backend: RerankBackend, payload: dict[str, Any]) -> str | None:
    field_name = "texts" if backend is RerankBackend.TEI else "documents"
    documents = payload.get(field_name)
    if not isinstance(payload.get("query"), str) or not isinstance(documents, list) or not documents:
        return "invalid request"
    if not all(isinstance(d, str) for d in documents):
        return "invalid request"
    if backend in KEYED and not payload.get("model"):
        return "model is required"
    if backend is RerankBackend.TEI and len(documents) > TEI_MAX_CLIENT_BATCH:
        return "batch size too large"
    return None


def _items(backend: RerankBackend, payload: dict[str, Any]) -> list[dict[str, Any]]:
    query = payload["query"]
    documents = payload["texts" if backend is RerankBackend.TEI else "documents"]
    raw = bool(payload.get("raw_scores", False))
    scored = []
    for index, document in enumerate(documents):
        if backend is RerankBackend.TEI:
            scored.append({"index": index, "score": logit(query, document) if raw else probability(query, document)})
        elif backend is RerankBackend.INFINITY and raw:
            scored.append({"index": index, "relevance_score": logit(query, document)})
        else:
            item: dict[str, Any] = {"index": index, "relevance_score": probability(query, document)}
            if backend is RerankBackend.VLLM:
                item["document"] = {"text": document}
            scored.append(item)
    top_n = payload.get("top_n") or len(scored)
    key = "score" if backend is RerankBackend.TEI else "relevance_score"
    return sorted(scored, key=lambda item: -item[key])[:top_n]


@pytest.fixture(scope="session")
def rerank_server() -> Iterator[FakeRerankServer]:
    fake = FakeRerankServer()
    with serve_on_loopback(fake.app, name="fake-rerank") as port:
        fake.port = port
        yield fake


@pytest.fixture
def server(rerank_server: FakeRerankServer) -> FakeRerankServer:
    rerank_server.reset()
    return rerank_server


@pytest.fixture
def api_key_env(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, API_KEY)
    return KEY_ENV


def options_for(
    server: FakeRerankServer, backend: RerankBackend, key_env: str, **overrides: Any
) -> HttpRerankerOptions:
    """Options pointing ``backend`` at the fake server; keyed backends read the test key."""
    values: dict[str, Any] = {"backend": backend, "base_url": server.url(backend)}
    if backend in KEYED:
        values["api_key_env"] = key_env
    return HttpRerankerOptions(**(values | overrides))


OpenReranker = Callable[..., AbstractAsyncContextManager[HttpReranker]]


@pytest.fixture
def open_reranker(server: FakeRerankServer, api_key_env: str) -> OpenReranker:
    """``async with open_reranker(backend, **options) as reranker``: the plugin's factory against the fake."""

    @asynccontextmanager
    async def _open(backend: RerankBackend, **overrides: Any) -> AsyncIterator[HttpReranker]:
        async with open_http_reranker(options_for(server, backend, api_key_env, **overrides)) as reranker:
            yield reranker

    return _open


def rerank_request(query: str, *contents: str) -> RagRerankRequest:
    return RagRerankRequest(
        query=query,
        candidates=tuple(
            RagRerankCandidate(document_id=f"d{i}.md", chunk_id=f"d{i}.md#0", content=text, original_rank=i)
            for i, text in enumerate(contents, start=1)
        ),
    )


@pytest.fixture
def make_request() -> Callable[..., RagRerankRequest]:
    return rerank_request
