"""A first ingestion runs inside the store's bulk-load mode (``BulkLoading``) when the store offers one:
entered when the run starts on an index with no documents, left on completion, failure and cancellation
alike; later runs and document API calls write without it; the in-memory store has no such mode."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

from runiq.hosting import Host
from runiq.rag import RagDocument, RagIngestionManager, RagIngestionState
from runiq.rag._stores.base import BulkLoading, DocumentWrite
from runiq.rag.providers import HashingEmbedder, InMemoryVectorStore, RagChunk, StoredDocument

DIMS = 16


class LoadingStore(InMemoryVectorStore):
    """An in-memory store with a bulk-load mode that records when it is entered and left, and which
    writes happened inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.loads: list[str] = []  # "enter <index>" / "exit <index>"
        self.loading = False
        self.written_loading: list[bool] = []  # per write: inside a bulk load?

    @asynccontextmanager
    async def bulk_load(self, index_name: str) -> AsyncIterator[None]:
        self.loads.append(f"enter {index_name}")
        self.loading = True
        try:
            yield
        finally:
            self.loading = False
            self.loads.append(f"exit {index_name}")

    async def replace_documents(self, index_name: str, items: Sequence[DocumentWrite]) -> None:
        self.written_loading.append(self.loading)
        await super().replace_documents(index_name, items)

    async def replace_document(
        self, index_name: str, document: StoredDocument, chunks: Sequence[RagChunk], vectors: Any
    ) -> None:
        self.written_loading.append(self.loading)
        await super().replace_document(index_name, document, chunks, vectors)


def _documents(n: int, version: int = 0) -> list[RagDocument]:
    return [RagDocument(document_id=f"d{i:03d}", content=f"Document {i} v{version} on remote work.") for i in range(n)]


def _host(index_host: Callable[..., Host], source: Any, store: object, embedder: object) -> Host:
    return index_host(
        lambda index: index.add_source(source).use_embedding("e").use_vector_store("s"),
        embeddings={"e": embedder},
        stores={"s": store},
    )


def test_the_in_memory_store_offers_no_bulk_load() -> None:
    assert isinstance(LoadingStore(), BulkLoading)
    assert not isinstance(InMemoryVectorStore(), BulkLoading)


async def test_only_a_run_on_an_empty_index_loads_in_bulk(index_host: Callable[..., Host], source: Any) -> None:
    """The first run writes everything inside one bulk load; a second run (documents stored) and the
    document API write outside it."""
    store = LoadingStore()
    source.documents = _documents(40)
    async with _host(index_host, source, store, HashingEmbedder(DIMS)) as host:
        manager = host.services.get(RagIngestionManager)
        first = await manager.run("docs")
        assert first.state is RagIngestionState.COMPLETED
        assert store.loads == ["enter docs", "exit docs"]
        assert store.written_loading and all(store.written_loading)
        store.written_loading.clear()
        source.documents = _documents(40, version=1)
        assert (await manager.run("docs")).state is RagIngestionState.COMPLETED
        await manager.ingest_documents("docs", [RagDocument(document_id="extra", content="One more document.")])
    assert store.loads == ["enter docs", "exit docs"]
    assert store.written_loading and not any(store.written_loading)
    assert await store.count("docs") == 41


async def test_a_failed_first_run_leaves_the_bulk_load(index_host: Callable[..., Host], source: Any) -> None:
    class BrokenSource(type(source)):  # type: ignore[misc]
        async def stream(self) -> AsyncIterator[Any]:
            async for item in super().stream():
                yield item
            raise OSError("the source broke")

    store = LoadingStore()
    broken = BrokenSource(_documents(10))
    async with _host(index_host, broken, store, HashingEmbedder(DIMS)) as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.FAILED
    assert store.loads == ["enter docs", "exit docs"]


async def test_a_cancelled_first_run_leaves_the_bulk_load(
    index_host: Callable[..., Host], source: Any, gated_embedder_type: Any
) -> None:
    store = LoadingStore()
    embedder = gated_embedder_type(DIMS)
    source.documents = _documents(10)
    async with _host(index_host, source, store, embedder) as host:
        manager = host.services.get(RagIngestionManager)
        await manager.start("docs")
        await asyncio.wait_for(embedder.reached.wait(), 10)
        assert store.loads == ["enter docs"]
        operation = await manager.cancel("docs")
    assert operation.state is RagIngestionState.CANCELLED
    assert store.loads == ["enter docs", "exit docs"]
