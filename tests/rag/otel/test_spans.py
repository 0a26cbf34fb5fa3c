"""OpenTelemetry spans: retrieval per source, fusion and rerank, one span per ingestion run, stage spans.

Attributes are asserted whole, so a new attribute is a decision a test records. Failures carry status
ERROR, the fixed description and ``error.type``, and never an exception event.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from runiq.hosting import Host
from runiq.rag import (
    HashingEmbedding,
    RagContextAssembler,
    RagContextOptions,
    RagDocument,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    RerankingOptions,
    RetrievalError,
)
from runiq.rag._context import RerankerFailurePolicy
from runiq.rag._observability.events import IngestionEvent, RetrievalEvent
from runiq.rag._observability.otel import (
    ERROR_DESCRIPTION,
    INGESTION_EXCLUDED_FIELDS,
    INGESTION_FIELDS,
    RETRIEVAL_EXCLUDED_FIELDS,
    RETRIEVAL_FIELDS,
    ingestion_span,
    stage_span,
)
from runiq.rag._reranking import LexicalOverlapReranker, RerankingFailedError
from runiq.rag._reranking.types import RagRerankRequest, RagRerankResponse
from runiq.rag.providers import InMemoryVectorStore, LexicalQuery, StoreHit
from runiq.rag.testing import FailingEmbedder

Spans = Callable[[], dict[str, list[ReadableSpan]]]

DOCUMENTS = [
    RagDocument(document_id="hr", content="Policy POL-HR-014 covers remote work three days a week."),
    RagDocument(document_id="code", content="Error CS1503 in the build: argument type does not convert."),
]


class EchoingLexicalStore(InMemoryVectorStore):
    async def lexical_search(self, index_name: str, query: LexicalQuery, **kwargs: Any) -> list[StoreHit]:
        raise RuntimeError(f"lexical backend echoed: {query.text}")


class BrokenStore(InMemoryVectorStore):
    async def ensure_index(self, spec: Any) -> None:
        raise ConnectionError("the store refused the connection")


class RaisingReranker:
    provider_name = "raising"
    remote = False

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        raise RuntimeError(f"upstream echoed {request.query}")


def _configure(
    documents: Sequence[RagDocument] = DOCUMENTS, *, embedder: str | None = None, store: str | None = None
) -> Callable[[Any], object]:
    def index(builder: Any) -> None:
        builder.use_documents(documents)
        builder.use_embedding(embedder) if embedder else builder.use_embedding(HashingEmbedding(dimensions=32))
        builder.use_vector_store(store) if store else builder.use_in_memory_vector_store()

    return lambda rag: rag.add_index("docs", index)


def _only(spans: Spans, name: str) -> ReadableSpan:
    found = spans().get(name, [])
    assert len(found) == 1, (name, sorted(spans()))
    return found[0]


def _assert_ok(span: ReadableSpan) -> None:
    assert span.status.status_code is StatusCode.UNSET
    assert span.events == ()


def _assert_failed(span: ReadableSpan, error_type: str) -> None:
    assert span.status.status_code is StatusCode.ERROR
    assert span.status.description == ERROR_DESCRIPTION
    assert span.attributes is not None and span.attributes["error.type"] == error_type
    assert span.events == ()  # no exception event: record_exception would copy the message and the stack


async def _ingested(host: Host) -> None:
    operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.COMPLETED


async def test_hybrid_retrieval_has_a_span_per_source_and_for_fusion(
    make_host: Callable[..., Host], finished_spans: Spans
) -> None:
    """runiq.retrieval parents runiq.retrieval.semantic, .lexical and .fusion, with the event's counts."""
    async with make_host(_configure()) as host:
        await _ingested(host)
        result = await host.services.get(RagRetriever).retrieve(
            RagQuery(index_name="docs", text="CS1503 build", mode=RagRetrievalMode.HYBRID, top_k=1)
        )
    stats = result.statistics
    retrieval = _only(finished_spans, "runiq.retrieval")
    assert dict(retrieval.attributes or {}) == {
        "runiq.index.name": "docs",
        "runiq.retrieval.mode": "hybrid",
        "runiq.retrieval.hits": 1,
        "runiq.retrieval.semantic_candidates": stats.semantic_candidates,
        "runiq.retrieval.lexical_candidates": stats.lexical_candidates,
        "runiq.retrieval.fused_candidates": stats.fused_candidates,
    }
    depth = 4  # top_k 1 x hybrid_candidate_multiplier 4
    semantic = _only(finished_spans, "runiq.retrieval.semantic")
    lexical = _only(finished_spans, "runiq.retrieval.lexical")
    fusion = _only(finished_spans, "runiq.retrieval.fusion")
    assert dict(semantic.attributes or {}) == {
        "runiq.index.name": "docs",
        "runiq.retrieval.depth": depth,
        "runiq.retrieval.candidates": stats.semantic_candidates,
    }
    assert dict(lexical.attributes or {}) == {
        "runiq.index.name": "docs",
        "runiq.retrieval.depth": depth,
        "runiq.retrieval.candidates": stats.lexical_candidates,
    }
    assert dict(fusion.attributes or {}) == {
        "runiq.index.name": "docs",
        "runiq.retrieval.fused_candidates": stats.fused_candidates,
    }
    for child in (semantic, lexical, fusion):
        assert child.parent is not None and child.parent.span_id == retrieval.context.span_id
        _assert_ok(child)
    _assert_ok(retrieval)


@pytest.mark.parametrize(
    ("mode", "source"), [(RagRetrievalMode.SEMANTIC, "semantic"), (RagRetrievalMode.LEXICAL, "lexical")]
)
async def test_single_source_retrieval_has_one_source_span_and_no_fusion(
    make_host: Callable[..., Host], finished_spans: Spans, mode: RagRetrievalMode, source: str
) -> None:
    async with make_host(_configure()) as host:
        await _ingested(host)
        await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text="CS1503", mode=mode))
    spans = finished_spans()
    assert sorted(name for name in spans if name.startswith("runiq.retrieval")) == [
        "runiq.retrieval",
        f"runiq.retrieval.{source}",
    ]
    assert _only(finished_spans, "runiq.retrieval").attributes["runiq.retrieval.mode"] == mode.value  # type: ignore[index]


async def test_retrieval_span_joins_the_callers_trace(make_host: Callable[..., Host], finished_spans: Spans) -> None:
    """A host's request span is the parent: runiq's spans land in the host's trace."""
    async with make_host(_configure()) as host:
        await _ingested(host)
        with trace.get_tracer("host").start_as_current_span("host.request") as request:
            await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text="CS1503"))
    retrieval = _only(finished_spans, "runiq.retrieval")
    assert retrieval.parent is not None and retrieval.parent.span_id == request.get_span_context().span_id


async def test_a_failed_source_marks_its_span_and_the_request_by_type_only(
    make_host: Callable[..., Host], finished_spans: Spans
) -> None:
    """The lexical backend's error text (which echoes the query) is recorded nowhere: type and code only."""
    async with make_host(_configure(store="echo"), stores={"echo": EchoingLexicalStore()}) as host:
        await _ingested(host)
        with pytest.raises(RetrievalError):
            await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text="remote work", mode=RagRetrievalMode.LEXICAL)
            )
    lexical = _only(finished_spans, "runiq.retrieval.lexical")
    _assert_failed(lexical, "RetrievalError")
    assert lexical.attributes["runiq.error.code"] == "lexical_query_failed"  # type: ignore[index]
    assert "runiq.retrieval.candidates" not in (lexical.attributes or {})
    retrieval = _only(finished_spans, "runiq.retrieval")
    _assert_failed(retrieval, "RetrievalError")
    assert dict(retrieval.attributes or {}) == {
        "runiq.index.name": "docs",
        "runiq.retrieval.mode": "lexical",
        "runiq.retrieval.hits": 0,
        "runiq.error.code": "lexical_query_failed",
        "error.type": "RetrievalError",
    }


async def test_a_failed_query_embedding_fails_the_semantic_span(
    make_host: Callable[..., Host], finished_spans: Spans
) -> None:
    embedder = FailingEmbedder(32, fail_on="zebra")
    async with make_host(_configure(embedder="failing"), embeddings={"failing": embedder}) as host:
        await _ingested(host)
        with pytest.raises(RetrievalError):
            await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text="zebra", mode=RagRetrievalMode.HYBRID)
            )
    semantic = _only(finished_spans, "runiq.retrieval.semantic")
    _assert_failed(semantic, "RetrievalError")
    assert semantic.attributes["runiq.error.code"] == "embedding_failed"  # type: ignore[index]
    assert "runiq.retrieval.fusion" not in finished_spans()


def _reranking(**options: Any) -> RagContextOptions:
    return RagContextOptions(reranking=RerankingOptions(enabled=True, **options))


async def test_a_successful_rerank_has_its_span(make_host: Callable[..., Host], finished_spans: Spans) -> None:
    async with make_host(_configure()) as host:
        await _ingested(host)
        assembler = RagContextAssembler(host.services.get(RagRetriever), LexicalOverlapReranker())
        result = await assembler.assemble(
            RagQuery(index_name="docs", text="CS1503 build", mode=RagRetrievalMode.LEXICAL), _reranking()
        )
    rerank = _only(finished_spans, "runiq.rerank")
    _assert_ok(rerank)
    assert dict(rerank.attributes or {}) == {
        "runiq.index.name": "docs",
        "runiq.rerank.outcome": "succeeded",
        "runiq.rerank.answerability": result.reranking.answerability.value,
        "runiq.rerank.ran": True,
        "runiq.rerank.timed_out": False,
        "runiq.rerank.candidates": result.reranking.candidate_count,
        "runiq.rerank.provider": "lexical-overlap",
    }


@pytest.mark.parametrize("policy", list(RerankerFailurePolicy))
async def test_a_failed_rerank_is_an_error_span_whatever_the_policy(
    make_host: Callable[..., Host], finished_spans: Spans, policy: RerankerFailurePolicy
) -> None:
    """Fallback or fail, the rerank step failed: ERROR, the failure code as error.type, the cause's class name."""
    async with make_host(_configure()) as host:
        await _ingested(host)
        assembler = RagContextAssembler(host.services.get(RagRetriever), RaisingReranker())
        query = RagQuery(index_name="docs", text="CS1503 build", mode=RagRetrievalMode.LEXICAL)
        if policy is RerankerFailurePolicy.FAIL:
            with pytest.raises(RerankingFailedError):
                await assembler.assemble(query, _reranking(on_failure=policy))
        else:
            await assembler.assemble(query, _reranking(on_failure=policy))
    rerank = _only(finished_spans, "runiq.rerank")
    _assert_failed(rerank, "reranker_failed")
    attributes = dict(rerank.attributes or {})
    assert attributes["runiq.rerank.outcome"] == ("failed" if policy is RerankerFailurePolicy.FAIL else "fallback")
    assert attributes["runiq.rerank.failure_code"] == "reranker_failed"
    assert attributes["runiq.rerank.cause_type"] == "RuntimeError"


async def test_disabled_reranking_has_no_span(make_host: Callable[..., Host], finished_spans: Spans) -> None:
    async with make_host(_configure()) as host:
        await _ingested(host)
        await RagContextAssembler(host.services.get(RagRetriever), LexicalOverlapReranker()).assemble(
            RagQuery(index_name="docs", text="CS1503")
        )
    assert "runiq.rerank" not in finished_spans()
    assert "runiq.retrieval" in finished_spans()


async def test_an_ingestion_run_is_one_span_with_its_final_counters(
    make_host: Callable[..., Host], finished_spans: Spans
) -> None:
    async with make_host(_configure()) as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    run = _only(finished_spans, "runiq.ingestion")
    _assert_ok(run)
    p = operation.progress
    assert dict(run.attributes or {}) == {
        "runiq.index.name": "docs",
        "runiq.ingestion.operation_id": operation.operation_id,
        "runiq.ingestion.reason": "manual",
        "runiq.ingestion.state": "completed",
        "runiq.ingestion.documents.discovered": 2,
        "runiq.ingestion.documents.added": 2,
        "runiq.ingestion.documents.updated": 0,
        "runiq.ingestion.documents.skipped": 0,
        "runiq.ingestion.documents.deleted": 0,
        "runiq.ingestion.documents.failed": 0,
        "runiq.ingestion.chunks": p.produced_chunks,
        "runiq.ingestion.files.skipped": 0,
    }


async def test_the_pipeline_reports_its_stages_inside_the_run(
    make_host: Callable[..., Host], finished_spans: Spans
) -> None:
    async with make_host(_configure()) as host:
        await host.services.get(RagIngestionManager).run("docs")
    spans = finished_spans()
    run = _only(finished_spans, "runiq.ingestion")
    for stage in ("runiq.ingestion.chunk", "runiq.ingestion.embed", "runiq.ingestion.write"):
        assert spans.get(stage), stage
        for span in spans[stage]:
            assert span.parent is not None and span.parent.span_id == run.context.span_id
    assert sum(s.attributes["runiq.ingestion.stage.items"] for s in spans["runiq.ingestion.write"]) == 2


async def test_an_ingestion_where_every_document_failed_is_an_error_span(
    make_host: Callable[..., Host], finished_spans: Spans
) -> None:
    async with make_host(_configure(embedder="failing"), embeddings={"failing": FailingEmbedder(32)}) as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.FAILED
    run = _only(finished_spans, "runiq.ingestion")
    _assert_failed(run, "document_failed")  # the last document's failure code
    assert run.attributes["runiq.ingestion.state"] == "failed"  # type: ignore[index]
    assert run.attributes["runiq.ingestion.documents.failed"] == 2  # type: ignore[index]
    assert run.attributes["runiq.error.code"] == "document_failed"  # type: ignore[index]


async def test_an_ingestion_that_raised_records_the_exception_type(
    make_host: Callable[..., Host], finished_spans: Spans
) -> None:
    async with make_host(_configure(store="broken"), stores={"broken": BrokenStore()}) as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.FAILED
    run = _only(finished_spans, "runiq.ingestion")
    _assert_failed(run, "ConnectionError")
    assert run.attributes["runiq.error.code"] == "ingestion_failed"  # type: ignore[index]


def test_stage_spans_nest_in_the_run_and_carry_counts_only(finished_spans: Spans) -> None:
    """The helper the pipeline calls: ``stage_span("embed", index=..., items=n)``."""
    with ingestion_span("docs", "op-1"), stage_span("embed", index="docs", items=3) as stage:
        stage.counts(failed=1)
    run = _only(finished_spans, "runiq.ingestion")
    embed = _only(finished_spans, "runiq.ingestion.embed")
    assert embed.parent is not None and embed.parent.span_id == run.context.span_id
    assert dict(embed.attributes or {}) == {
        "runiq.index.name": "docs",
        "runiq.ingestion.stage.name": "embed",
        "runiq.ingestion.stage.items": 3,
        "runiq.ingestion.stage.failed": 1,
    }
    _assert_ok(embed)


def test_a_stage_that_raises_is_an_error_span(finished_spans: Spans) -> None:
    with pytest.raises(OSError, match="disk"), stage_span("write", index="docs"):
        raise OSError("disk full at /secret/path")
    _assert_failed(_only(finished_spans, "runiq.ingestion.write"), "OSError")


def test_stage_names_are_a_closed_set_and_counts_are_integers(finished_spans: Spans) -> None:
    """Nothing but code-defined names and integers can reach a stage span."""
    with pytest.raises(ValueError, match="is not a valid IngestionStage"):
        stage_span("read /home/alice/notes.md", index="docs")
    with stage_span("chunk", index="docs") as stage, pytest.raises(TypeError, match="integers"):
        stage.counts(document="alice/notes.md")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("event", "mapped", "excluded"),
    [
        (RetrievalEvent, RETRIEVAL_FIELDS, RETRIEVAL_EXCLUDED_FIELDS),
        (IngestionEvent, INGESTION_FIELDS, INGESTION_EXCLUDED_FIELDS),
    ],
)
def test_every_event_field_is_mapped_or_left_out_on_purpose(
    event: type[Any], mapped: dict[str, str], excluded: frozenset[str]
) -> None:
    """A new event field must be decided on: an attribute name, or an explicit exclusion (the query, previews)."""
    fields = {field.name for field in dataclasses.fields(event)}
    assert set(mapped) | excluded == fields
    assert not set(mapped) & excluded
    assert {"query", "hits"} <= RETRIEVAL_EXCLUDED_FIELDS
