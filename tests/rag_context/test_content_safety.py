"""Canary content and queries never reach logs, error strings, tracebacks or decision records, on every
path of the policy: success, each rejection, grounding, budget, and every reranker failure under both
failure policies. Reranker content is passed as data (the request), nowhere else."""

from __future__ import annotations

import math
import traceback
from typing import Any

import pytest

from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexRuntime,
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
    ContextBudget,
    ContextBudgetUnit,
    GroundingOptions,
    RagContextAssembler,
    RagContextOptions,
    RerankerFailurePolicy,
    RerankingOptions,
)
from runiq.rag._reranking import RagAnswerability, RerankerRegistration, RerankingFailedError, index_reranker_resolver
from runiq.rag.testing import CANARY


def leaks(*values: object) -> list[str]:
    return [repr(v)[:80] for v in values if CANARY in repr(v) or CANARY in str(v)]


def canary_hits(kit: Any) -> list[Any]:
    return [
        kit.hit("a", content=f"Remote work policy text {CANARY} alpha section."),
        kit.hit("b", content=f"Remote work policy text {CANARY} beta section, different words here."),
        kit.hit("c", content=f"{CANARY}", relevance=math.nan),
        kit.hit("d", content=f"Remote work policy text {CANARY} alpha section."),
    ]


def canary_query(kit: Any) -> RagQuery:
    return kit.query(text=f"remote work policy {CANARY}")


def opts(**reranking: Any) -> RagContextOptions:
    return RagContextOptions(reranking=RerankingOptions(enabled=True, timeout_seconds=0.05, **reranking))


def assert_clean(logs: list[dict[str, Any]], *values: object) -> None:
    assert logs, "the path logged nothing, so the check would be vacuous"
    assert CANARY not in repr(logs)
    assert leaks(*values) == []


async def test_success_path(kit: Any, logs: list[dict[str, Any]]) -> None:
    """Reranked and selected: the reranker saw the content (as data); logs and the result repr did not."""
    reranker = kit.ScoringReranker(lambda c: (0.5, RagAnswerability.ANSWERABLE))
    result = await RagContextAssembler(kit.Retriever(canary_hits(kit)), reranker).assemble(canary_query(kit), opts())
    assert CANARY in reranker.requests[0].query
    assert all(CANARY in c.content for c in reranker.requests[0].candidates)
    assert {e["event"] for e in logs} == {"reranking.completed", "context.assembled"}
    assert_clean(logs, result, result.decisions, result.reranking, result.budget, *result.context)


@pytest.mark.parametrize(
    "options",
    [
        RagContextOptions(minimum_relevance=0.99),
        RagContextOptions(maximum_accepted_results=1),
        RagContextOptions(budget=ContextBudget(maximum=5, unit=ContextBudgetUnit.CHARACTERS)),
        RagContextOptions(
            reranking=RerankingOptions(enabled=True), grounding=GroundingOptions(require_answerable=True)
        ),
    ],
    ids=["threshold", "limit", "budget", "not-grounded"],
)
async def test_rejection_paths(kit: Any, logs: list[dict[str, Any]], options: RagContextOptions) -> None:
    """Thresholds, limits, budget and grounding record codes, never content."""
    reranker = kit.ScoringReranker(answerability=RagAnswerability.NOT_ANSWERABLE)
    result = await RagContextAssembler(kit.Retriever(canary_hits(kit)), reranker).assemble(canary_query(kit), options)
    assert_clean(logs, result, result.decisions)


FAILING = {
    "exception": lambda kit: kit.RaisingReranker(),
    "provider-timeout": lambda kit: kit.RaisingReranker(lambda r: TimeoutError(f"{r.query}")),
    "timeout": lambda kit: kit.SlowReranker(),
    "invalid": lambda kit: kit.RespondingReranker(lambda r: {"echo": r.query}),
    "nan": lambda kit: kit.ScoringReranker(lambda c: (math.nan, RagAnswerability.UNKNOWN)),
}


@pytest.mark.parametrize("name", list(FAILING))
async def test_failure_paths_with_fallback(kit: Any, logs: list[dict[str, Any]], name: str) -> None:
    """Fallback: the failure is logged by code; the provider's echoing text goes nowhere."""
    assembler = RagContextAssembler(kit.Retriever(canary_hits(kit)), FAILING[name](kit))
    result = await assembler.assemble(canary_query(kit), opts(on_failure=RerankerFailurePolicy.USE_RETRIEVAL_ORDER))
    assert "reranking.failed" in {e["event"] for e in logs}
    assert_clean(logs, result, result.reranking, result.decisions)


@pytest.mark.parametrize("name", list(FAILING))
async def test_failure_paths_with_fail(kit: Any, logs: list[dict[str, Any]], name: str) -> None:
    """Fail: the error's message, repr, attributes, cause chain and formatted traceback are content-free."""
    assembler = RagContextAssembler(kit.Retriever(canary_hits(kit)), FAILING[name](kit))
    with pytest.raises(RerankingFailedError) as caught:
        await assembler.assemble(canary_query(kit), opts(on_failure=RerankerFailurePolicy.FAIL))
    error = caught.value
    formatted = "".join(traceback.format_exception(error))
    assert CANARY not in formatted
    assert {e["event"] for e in logs} >= {"reranking.failed", "context.failed"}
    assert_clean(logs, error, error.__cause__, error.decisions, vars(error))


async def test_unavailable_and_unapproved_paths(kit: Any, logs: list[dict[str, Any]]) -> None:
    """Resolver failures (including one whose text has the canary) stay content-free."""

    async def broken(index_name: str) -> RerankerRegistration:
        raise ConnectionError(CANARY)

    async def unapproved(index_name: str) -> RerankerRegistration:
        return RerankerRegistration(kit.RemoteReranker())

    for resolver in (broken, unapproved):
        assembler = RagContextAssembler(kit.Retriever(canary_hits(kit)), reranker_resolver=resolver)
        with pytest.raises(RerankingFailedError) as caught:
            await assembler.assemble(canary_query(kit), opts(on_failure=RerankerFailurePolicy.FAIL))
        assert CANARY not in "".join(traceback.format_exception(caught.value))
    assert_clean(logs)


async def test_end_to_end_through_a_host(logs: list[dict[str, Any]]) -> None:
    """A real retriever, the lexical reranker and hidden queries: no canary in any log line of any module."""
    documents = [
        RagDocument(document_id="hr", content=f"Remote work policy POL-HR-014 {CANARY} three days."),
        RagDocument(document_id="it", content=f"Laptop policy {CANARY} for remote staff."),
    ]
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.configure_observability(
            RagObservabilityOptions(query_visibility=RagQueryVisibility.HIDDEN)
        ).add_index(
            "docs",
            lambda index: (
                index.use_documents(documents)
                .use_embedding(HashingEmbedding(dimensions=64))
                .use_in_memory_vector_store()
                .use_reranker("lexical-overlap")
            ),
        ),
    )
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        assembler = RagContextAssembler(
            host.services.get(RagRetriever), reranker_resolver=index_reranker_resolver(host.services.get(IndexRuntime))
        )
        for mode in RagRetrievalMode:
            query = RagQuery(index_name="docs", text=f"remote policy {CANARY}", mode=mode)
            result = await assembler.assemble(query, opts())
            assert result.has_context
            assert_clean(logs, result, result.decisions)
    assert {"retrieval.completed", "reranking.completed", "context.assembled"} <= {e["event"] for e in logs}
