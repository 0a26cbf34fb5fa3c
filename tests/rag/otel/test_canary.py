"""Canary test over exported telemetry: no query, content, metadata, document id, file name or credential
reaches a span's name, attributes, events, links, status description or resource, nor a metric.

The observability options are the most revealing a host can choose (query VISIBLE, content previews
and a safe metadata key enabled): those shape events and logs, never spans or metrics. Every failure
path whose exception echoes the canaries runs too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from runiq.hosting import Host
from runiq.rag import (
    ContentPreviewOptions,
    HashingEmbedding,
    RagContextAssembler,
    RagContextOptions,
    RagDocument,
    RagError,
    RagIngestionManager,
    RagObservabilityOptions,
    RagQuery,
    RagQueryVisibility,
    RagRetrievalMode,
    RagRetriever,
    RerankingOptions,
)
from runiq.rag._context import RerankerFailurePolicy
from runiq.rag._embeddings.base import FloatMatrix
from runiq.rag._reranking.types import RagRerankRequest, RagRerankResponse
from runiq.rag.providers import EmbeddingInputKind, HashingEmbedder, InMemoryVectorStore, LexicalQuery, StoreHit
from runiq.rag.testing import CANARY, FailingEmbedder

FILE_CANARY = "FILECANARY-2b81"
ID_CANARY = "IDCANARY-c4d2"
KEY_CANARY = "sk-KEYCANARY-9e01"
CANARIES = (CANARY, FILE_CANARY, ID_CANARY, KEY_CANARY, "CANARY")


class KeyedEmbedder(HashingEmbedder):
    """A provider holding a credential whose errors echo it (as an HTTP client echoing its headers would)."""

    def __init__(self) -> None:
        super().__init__(32)
        self.api_key = KEY_CANARY

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        raise PermissionError(f"401 for Authorization: Bearer {self.api_key} on {' | '.join(texts)}")


class EchoingLexicalStore(InMemoryVectorStore):
    async def lexical_search(self, index_name: str, query: LexicalQuery, **kwargs: Any) -> list[StoreHit]:
        raise RuntimeError(f"lexical backend echoed: {query.text}")


class BrokenStore(InMemoryVectorStore):
    async def ensure_index(self, spec: Any) -> None:
        raise ConnectionError(f"cannot reach postgresql://admin:{KEY_CANARY}@db/{CANARY}")


class EchoingReranker:
    provider_name = "echoing"
    remote = False

    async def rerank(self, request: RagRerankRequest) -> RagRerankResponse:
        raise RuntimeError(f"upstream echoed {request.query} / {' | '.join(c.content for c in request.candidates)}")


def _documents() -> list[RagDocument]:
    return [
        RagDocument(
            document_id=f"hr/{ID_CANARY}.md",
            content=f"Policy POL-HR-014 covers remote work. {CANARY}",
            metadata={"team": f"hr {CANARY}", "owner": f"{CANARY}@example.com"},
        ),
        RagDocument(document_id="code", content="Error CS1503 in filename.cs."),
    ]


def _configure(root: Path) -> Callable[[Any], object]:
    def configure(rag: Any) -> None:
        rag.configure_observability(
            RagObservabilityOptions(
                query_visibility=RagQueryVisibility.VISIBLE,
                safe_metadata_keys=frozenset({"team"}),
                content_preview=ContentPreviewOptions(enabled=True, include_selected_results=True),
            )
        )
        hashing = HashingEmbedding(dimensions=32)
        rag.add_index(
            "docs", lambda i: i.use_documents(_documents()).use_embedding(hashing).use_in_memory_vector_store()
        )
        rag.add_index(
            "files", lambda i: i.use_directory(root, "*.md").use_embedding(hashing).use_in_memory_vector_store()
        )
        rag.add_index(
            "keyed", lambda i: i.use_documents(_documents()).use_embedding("keyed").use_in_memory_vector_store()
        )
        rag.add_index(
            "echoing", lambda i: i.use_documents(_documents()).use_embedding("echoing").use_vector_store("echo")
        )
        rag.add_index(
            "broken", lambda i: i.use_documents(_documents()).use_embedding(hashing).use_vector_store("broken")
        )

    return configure


async def _retrieve_everywhere(host: Host) -> None:
    retriever = host.services.get(RagRetriever)
    for index in ("docs", "files", "keyed", "echoing"):
        for mode in RagRetrievalMode:
            query = RagQuery(index_name=index, text=f"remote work {CANARY} {ID_CANARY} {KEY_CANARY}", mode=mode)
            try:
                await retriever.retrieve(query)
            except RagError:
                assert index in ("keyed", "echoing")


async def _assemble_with_failing_reranker(host: Host) -> None:
    assembler = RagContextAssembler(host.services.get(RagRetriever), EchoingReranker())
    query = RagQuery(index_name="docs", text=f"POL-HR-014 remote {CANARY}", mode=RagRetrievalMode.LEXICAL)
    for policy in RerankerFailurePolicy:
        options = RagContextOptions(reranking=RerankingOptions(enabled=True, on_failure=policy))
        try:
            await assembler.assemble(query, options)
        except RagError:
            assert policy is RerankerFailurePolicy.FAIL


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    root = tmp_path / f"dir-{FILE_CANARY}"
    root.mkdir()
    (root / f"{FILE_CANARY}.md").write_text(f"Readable remote work policy text. {CANARY}")
    (root / f"bad-{FILE_CANARY}.md").write_bytes(b"\xff\xfe\x00bad \xc3\x28")
    return root


async def test_no_canary_in_any_exported_span_or_metric(
    make_host: Callable[..., Host],
    directory: Path,
    span_exporter: InMemorySpanExporter,
    metric_reader: InMemoryMetricReader,
) -> None:
    providers = {
        "embeddings": {"keyed": KeyedEmbedder(), "echoing": FailingEmbedder(32, fail_on=CANARY)},
        "stores": {"echo": EchoingLexicalStore(), "broken": BrokenStore()},
    }
    async with make_host(_configure(directory), **providers) as host:
        manager = host.services.get(RagIngestionManager)
        for index in ("docs", "files", "keyed", "echoing", "broken"):
            await manager.run(index)
        await _retrieve_everywhere(host)
        await _assemble_with_failing_reranker(host)

    spans = span_exporter.get_finished_spans()
    names = {span.name for span in spans}
    # Not vacuous: every kind of span was exported, failures among them, and metrics were recorded.
    assert {"runiq.ingestion", "runiq.retrieval", "runiq.retrieval.semantic", "runiq.retrieval.lexical"} <= names
    assert {"runiq.retrieval.fusion", "runiq.rerank"} <= names
    assert sum(span.status.status_code is StatusCode.ERROR for span in spans) >= 8
    metrics = metric_reader.get_metrics_data()
    assert metrics is not None and metrics.resource_metrics
    exported = [span.to_json() + repr(span.instrumentation_scope) for span in spans] + [metrics.to_json()]
    text = "\n".join(exported)
    for canary in CANARIES:
        assert canary not in text
    for leak in ("echoed", "Authorization", "postgresql://", "remote work", "POL-HR-014", "example.com", "dir-"):
        assert leak not in text
    assert all(span.events == () for span in spans)
