"""OpenTelemetry metrics: retrieval duration per mode, ingestion duration and document counters."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import pytest
from structlog.testing import capture_logs

from runiq.hosting import Host
from runiq.rag import (
    HashingEmbedding,
    RagDocument,
    RagIngestionManager,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    RetrievalError,
)
from runiq.rag._observability import otel
from runiq.rag._observability.otel import (
    FAILED_DOCUMENTS,
    INGESTED_DOCUMENTS,
    INGESTION_DURATION,
    RETRIEVAL_DURATION,
)
from runiq.rag.providers import InMemoryVectorStore, LexicalQuery, StoreHit
from runiq.rag.testing import FailingEmbedder

Points = Callable[[str], list[tuple[dict[str, Any], Any]]]


class EchoingLexicalStore(InMemoryVectorStore):
    async def lexical_search(self, index_name: str, query: LexicalQuery, **kwargs: Any) -> list[StoreHit]:
        raise RuntimeError(f"lexical backend echoed: {query.text}")


def _configure(documents: list[RagDocument], **providers: str) -> Callable[[Any], object]:
    def index(builder: Any) -> None:
        builder.use_documents(documents)
        embedder, store = providers.get("embedder"), providers.get("store")
        builder.use_embedding(embedder) if embedder else builder.use_embedding(HashingEmbedding(dimensions=32))
        builder.use_vector_store(store) if store else builder.use_in_memory_vector_store()

    return lambda rag: rag.add_index("docs", index)


DOCUMENTS = [
    RagDocument(document_id="a", content="Remote work is allowed three days a week."),
    RagDocument(document_id="b", content="Error CS1503: argument type does not convert."),
]


async def test_retrieval_duration_is_a_histogram_per_index_and_mode(
    make_host: Callable[..., Host], metric_points: Points
) -> None:
    async with make_host(_configure(DOCUMENTS)) as host:
        await host.services.get(RagIngestionManager).run("docs")
        retriever = host.services.get(RagRetriever)
        results = {}
        for mode in RagRetrievalMode:
            results[mode] = await retriever.retrieve(RagQuery(index_name="docs", text="remote work", mode=mode))
            await retriever.retrieve(RagQuery(index_name="docs", text="CS1503", mode=mode))
    points = metric_points(RETRIEVAL_DURATION)
    assert sorted((attrs["runiq.retrieval.mode"], point.count) for attrs, point in points) == [
        ("hybrid", 2),
        ("lexical", 2),
        ("semantic", 2),
    ]
    for attrs, point in points:
        assert attrs == {"runiq.index.name": "docs", "runiq.retrieval.mode": attrs["runiq.retrieval.mode"]}
        assert point.sum > 0
        # Seconds, not milliseconds: the two in-memory requests take far less than 10 s together.
        assert point.sum < 10
        assert point.sum >= results[RagRetrievalMode(attrs["runiq.retrieval.mode"])].duration_seconds * 0.5


async def test_a_failed_retrieval_is_measured_with_its_error_code(
    make_host: Callable[..., Host], metric_points: Points
) -> None:
    async with make_host(_configure(DOCUMENTS, store="echo"), stores={"echo": EchoingLexicalStore()}) as host:
        await host.services.get(RagIngestionManager).run("docs")
        with pytest.raises(RetrievalError):
            await host.services.get(RagRetriever).retrieve(
                RagQuery(index_name="docs", text="remote", mode=RagRetrievalMode.LEXICAL)
            )
    [(attrs, point)] = metric_points(RETRIEVAL_DURATION)
    assert attrs == {
        "runiq.index.name": "docs",
        "runiq.retrieval.mode": "lexical",
        "error.type": "lexical_query_failed",
    }
    assert point.count == 1


async def test_ingestion_counts_ingested_and_failed_documents(
    make_host: Callable[..., Host], metric_points: Points, source: Any
) -> None:
    """Added and updated documents count as ingested; unchanged ones do not; failures have their own counter."""
    source.set(a="Remote work is allowed three days a week.", b="Error CS1503: argument type does not convert.")
    embedder = FailingEmbedder(32, fail_on="poison")

    def configure(rag: Any) -> None:
        rag.add_index(
            "docs", lambda index: index.add_source(source).use_embedding("failing").use_in_memory_vector_store()
        )

    async with make_host(configure, embeddings={"failing": embedder}) as host:
        manager = host.services.get(RagIngestionManager)
        await manager.run("docs")  # a and b added
        source.set(a="Remote work is allowed two days a week.", b=source.documents[1].content, c="poison pill")
        await manager.run("docs")  # a updated, b unchanged, c failed
    attributes = {"runiq.index.name": "docs", "runiq.ingestion.reason": "manual"}
    assert [(a, p.value) for a, p in metric_points(INGESTED_DOCUMENTS)] == [(attributes, 3)]
    assert [(a, p.value) for a, p in metric_points(FAILED_DOCUMENTS)] == [(attributes, 1)]
    durations = sorted((a["runiq.ingestion.state"], p.count) for a, p in metric_points(INGESTION_DURATION))
    assert durations == [("completed", 1), ("partially_completed", 1)]


async def test_a_failing_meter_never_fails_the_request(
    make_host: Callable[..., Host], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Metrics are best effort: an instrument that raises is logged by class name and the result stands."""

    class Exploding:
        def record(self, *args: object, **kwargs: object) -> None:
            raise RuntimeError("meter backend down: remote work")

    instruments = otel._instruments()
    assert instruments is not None
    exploding = dataclasses.replace(instruments, retrieval_duration=Exploding())
    monkeypatch.setattr(otel, "_instruments", lambda: exploding)
    async with make_host(_configure(DOCUMENTS)) as host:
        await host.services.get(RagIngestionManager).run("docs")
        with capture_logs() as logs:
            result = await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text="remote work"))
    assert result.hits
    failures = [entry for entry in logs if entry["event"] == "observability.metrics_failed"]
    assert failures == [{"event": "observability.metrics_failed", "error": "RuntimeError", "log_level": "warning"}]
