"""End to end on a host: egress approval, reranking through the context policy, its deadline and fallback."""

from __future__ import annotations

import logging
import time
import traceback
from importlib.metadata import entry_points
from typing import Any

import pytest
import structlog
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexRuntime,
    RagConfigurationError,
    RagDocument,
    RagIngestionManager,
    RagObservabilityOptions,
    RagQuery,
    RagQueryVisibility,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._context import (
    RagContextAssembler,
    RagContextOptions,
    RagContextOutcome,
    RagRerankingOutcome,
    RerankerFailurePolicy,
    RerankingOptions,
)
from runiq.rag._reranking import (
    RerankerNotApprovedError,
    RerankingFailedError,
    RerankingFailureCode,
    index_reranker_resolver,
)
from runiq.rag.providers import ProviderKind

import runiq_rerank_http.plugin
from runiq_rerank_http import HttpReranking, RerankBackend

TEI = RerankBackend.TEI


def _documents(canary: str = "") -> list[RagDocument]:
    # BM25 ranks "travel" first for "remote work policy" (it repeats two of the terms); the fake model
    # scores by the share of query terms present, so "hr" (all three) comes first after reranking.
    return [
        RagDocument(
            document_id="travel",
            content=f"Remote travel policy: remote trips and remote meetings follow the travel policy. {canary}",
        ),
        RagDocument(
            document_id="hr",
            content="Working remotely: the remote work policy allows three days per week at home for staff.",
        ),
        RagDocument(document_id="badges", content="Security badges must be worn at work at all times on site."),
        RagDocument(document_id="canteen", content="The canteen is open for work lunches from noon."),
    ]


def _builder(
    selection: Any, *, approved: bool = True, documents: list[RagDocument] | None = None, **options: Any
) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_rerank_http.plugin])
    # The host's retrieval events show the query unless told otherwise; hide it so the canary checks
    # below see what the reranking path logs.
    hidden = RagObservabilityOptions(query_visibility=RagQueryVisibility.HIDDEN)
    add_runiq_rag(
        builder,
        lambda rag: rag.configure_observability(hidden).add_index(
            "docs",
            lambda index: (
                index.use_documents(documents or _documents())
                .use_embedding(HashingEmbedding(dimensions=64))
                .use_in_memory_vector_store()
                .use_reranker(selection, approved=approved, **options)
            ),
        ),
    )
    return builder


async def _assemble(builder: HostBuilder, text: str, reranking: RerankingOptions) -> Any:
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        assembler = RagContextAssembler(
            host.services.get(RagRetriever), reranker_resolver=index_reranker_resolver(host.services.get(IndexRuntime))
        )
        query = RagQuery(index_name="docs", text=text, mode=RagRetrievalMode.LEXICAL, top_k=5)
        return await assembler.assemble(query, RagContextOptions(reranking=reranking))


def test_a_remote_reranker_needs_the_hosts_approval(server) -> None:
    """The provider is registered as remote: selecting it without approved=True fails at registration."""
    with pytest.raises(RerankerNotApprovedError, match="rerank-http"):
        _builder(HttpReranking(TEI, base_url=server.url(TEI)), approved=False)


def test_registered_remote_and_declared_as_an_entry_point() -> None:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_rerank_http.plugin])
    assert builder.providers.get(ProviderKind.RERANKER, "rerank-http").remote is True
    [ep] = [ep for ep in entry_points(group="runiq") if ep.name == "rerank-http"]
    assert ep.value == "runiq_rerank_http.plugin"


@pytest.mark.parametrize("backend", list(RerankBackend), ids=[b.value for b in RerankBackend])
async def test_the_policy_reorders_by_the_apis_scores(server, api_key_env, backend) -> None:
    """Retrieval ranks 'travel' first; the API's scores put the remote-work policy first, with the API's score."""
    key = {"api_key_env": api_key_env} if backend in (RerankBackend.COHERE, RerankBackend.JINA) else {}
    selection = HttpReranking(backend, base_url=server.url(backend), **key)
    result = await _assemble(_builder(selection), "remote work policy", RerankingOptions(enabled=True))
    assert result.outcome is RagContextOutcome.CONTEXT
    assert result.reranking.outcome is RagRerankingOutcome.SUCCEEDED
    assert result.reranking.provider == "rerank-http"
    assert result.retrieval.hits[0].document_id == "travel"
    assert [item.document_id for item in result.context[:2]] == ["hr", "travel"]
    assert result.context[0].rerank is not None
    assert result.context[0].rerank.relevance == pytest.approx(
        server.probability("remote work policy", _documents()[1].content)
    )
    assert len(server.requests) == 1


async def test_a_string_reference_validates_the_same_options(server) -> None:
    """``use_reranker("rerank-http", backend=..., approved=True)`` works; bad options fail naming the field."""
    builder = _builder("rerank-http", backend="tei", base_url=server.url(TEI))
    result = await _assemble(builder, "remote work policy", RerankingOptions(enabled=True))
    assert result.reranking.outcome is RagRerankingOutcome.SUCCEEDED
    assert server.requests[0].payload["raw_scores"] is True
    for options, field in (
        ({"backend": "tei"}, "base_url"),
        ({"backend": "bing"}, "backend"),
        ({"backend": "tei", "base_url": server.url(TEI), "bogus": 1}, "bogus"),
        ({"backend": "tei", "base_url": "https://user:pw@host"}, "base_url"),
    ):
        with pytest.raises(RagConfigurationError, match=field) as caught:
            _builder("rerank-http", **options)
        assert "pw@" not in str(caught.value)


async def test_the_policy_deadline_falls_back_to_retrieval_order(server, canary, caplog) -> None:
    """A server slower than RerankingOptions.timeout_seconds: outcome fallback, reranker_timeout, retrieval order."""
    caplog.set_level(logging.DEBUG)
    server.delay = 3.0
    selection = HttpReranking(TEI, base_url=server.url(TEI))
    started = time.monotonic()
    with structlog.testing.capture_logs() as events:
        result = await _assemble(
            _builder(selection, documents=_documents(canary)),
            f"remote work policy {canary}",
            RerankingOptions(enabled=True, timeout_seconds=0.5),
        )
    assert time.monotonic() - started < 2.5
    report = result.reranking
    assert report.outcome is RagRerankingOutcome.FALLBACK
    assert report.failure_code is RerankingFailureCode.TIMEOUT
    assert report.timed_out is True
    assert result.outcome is RagContextOutcome.CONTEXT
    assert [item.document_id for item in result.context] == [hit.document_id for hit in result.retrieval.hits]
    assert all(item.rerank is None for item in result.context)
    logs = caplog.text + repr(events)
    assert canary not in logs, logs[max(0, logs.find(canary) - 600) : logs.find(canary) + 100]


async def test_a_failing_api_with_the_fail_policy_raises_content_free(server, canary, caplog) -> None:
    """on_failure=fail: a 500 (echoing the canary) becomes RerankingFailedError; no text from it anywhere."""
    caplog.set_level(logging.DEBUG)
    server.script(*[server.Scripted(status=500, headers={"Retry-After": "0"})] * 3)
    selection = HttpReranking(TEI, base_url=server.url(TEI), max_retries=1)
    options = RerankingOptions(enabled=True, on_failure=RerankerFailurePolicy.FAIL)
    with pytest.raises(RerankingFailedError) as caught:
        await _assemble(_builder(selection, documents=_documents(canary)), f"remote {canary}", options)
    error = caught.value
    assert error.code is RerankingFailureCode.FAILED
    assert error.cause_type == "ProviderUnavailableError"
    rendered = "".join(traceback.format_exception(error)) + repr(error.__cause__.args) + repr(vars(error))
    assert canary not in rendered
    assert canary not in caplog.text
    assert len(server.requests) == 2
