"""How the stages group work: groups sorted by length, writes of many embedded groups, compact run state
(seen ids), and the progress a run reports while it goes (phase, totals, embedded chunks)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from runiq.hosting import Host
from runiq.rag import RagDocument, RagIngestionManager, RagIngestionPhase, RagIngestionState
from runiq.rag._ingestion import pipeline as pipeline_module
from runiq.rag._ingestion.seen import SeenIds
from runiq.rag._stores.base import DocumentWrite
from runiq.rag.providers import HashingEmbedder, InMemoryVectorStore

DIMS = 16


class RecordingStore(InMemoryVectorStore):
    """Records the number of documents of each bulk write."""

    def __init__(self) -> None:
        super().__init__()
        self.bulk_writes: list[int] = []

    async def replace_documents(self, index_name: str, items: Sequence[DocumentWrite]) -> None:
        self.bulk_writes.append(len(items))
        await super().replace_documents(index_name, items)


def _documents(n: int) -> list[RagDocument]:
    return [RagDocument(document_id=f"d{i:04d}", content=f"Document {i} about remote work.") for i in range(n)]


def _index(source: Any, embedder: str, store: str | None, batching: tuple[int, int]) -> Callable[[Any], object]:
    def configure(index: Any) -> object:
        index.add_source(source).use_embedding(embedder)
        if store is None:
            index.use_in_memory_vector_store()
        else:
            index.use_vector_store(store)
        return index.configure_embedding_batching(*batching)

    return configure


async def test_a_write_takes_every_embedded_group_waiting_for_it(
    index_host: Callable[..., Host], source: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a fast embedder the store is the slowest stage: writes grow up to WRITE_CHUNKS documents of one
    chunk, far more than one embedding group, and every document is written once."""
    monkeypatch.setattr(pipeline_module, "WRITE_CHUNKS", 64)
    source.documents = _documents(600)
    store = RecordingStore()
    original = store.replace_documents

    async def slow(index_name: str, items: Sequence[DocumentWrite]) -> None:
        await asyncio.sleep(0.02)  # the database's time: embedded groups queue up meanwhile
        await original(index_name, items)

    monkeypatch.setattr(store, "replace_documents", slow)
    host = index_host(
        _index(source, "fast", "recording", (8, 1)),
        embeddings={"fast": HashingEmbedder(DIMS)},
        stores={"recording": store},
    )
    async with host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.COMPLETED
    assert sum(store.bulk_writes) == 600 and await store.count("docs") == 600
    assert max(store.bulk_writes) > 8 and max(store.bulk_writes) <= 64 + 8


async def test_each_window_is_embedded_longest_chunks_first(
    index_host: Callable[..., Host], source: Any, counting_embedder: Any
) -> None:
    """Documents of mixed lengths: groups (and the batches in them) hold texts of similar length, longest
    first, as one sorted ``encode`` of everything would; every document is still written once."""
    lengths = [5, 40, 12, 33, 8, 27, 19, 2, 36, 15, 24, 30]
    source.documents = [
        RagDocument(document_id=f"d{i:02d}", content=" ".join(["word"] * n)) for i, n in enumerate(lengths)
    ]
    host = index_host(_index(source, "counting", None, (4, 1)), embeddings={"counting": counting_embedder})
    async with host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.progress.added_documents == len(lengths)
    sent = [len(text.split()) for batch in counting_embedder.batches for text in batch]
    assert sent == sorted(lengths, reverse=True)


async def test_a_run_reports_its_phase_total_and_embedded_chunks_as_it_goes(
    index_host: Callable[..., Host], source: Any, gated_embedder_type: Any
) -> None:
    source.documents = _documents(30)
    embedder = gated_embedder_type(DIMS)
    host = index_host(_index(source, "gated", None, (4, 1)), embeddings={"gated": embedder})
    async with host:
        manager = host.services.get(RagIngestionManager)
        started = await manager.start("docs")
        assert started.phase is RagIngestionPhase.OPENING
        await asyncio.wait_for(embedder.reached.wait(), 5)
        running = manager.status("docs").active_operation
        assert running is not None and running.phase is RagIngestionPhase.INGESTING
        assert running.progress.expected_documents == 30  # the source was read to its end before embedding
        assert running.progress.embedded_chunks == 0
        embedder.release.set()
        finished = await manager.wait("docs")
    p = finished.progress
    assert finished.phase is RagIngestionPhase.FINISHED
    assert (p.expected_documents, p.discovered_documents, p.processed_documents) == (30, 30, 30)
    assert p.embedded_chunks == p.produced_chunks == p.produced_embeddings == 30
    assert finished.throughput().documents_per_second > 0


def test_seen_ids_find_duplicates_within_a_window_and_across_merged_ones() -> None:
    seen = SeenIds()
    ids = [f"dir{i // 1000}/file{i}.txt" for i in range(20_000)]  # beyond the fresh arrays: merged twice
    for start in range(0, len(ids), 1000):
        assert all(seen.add_all(ids[start : start + 1000]))
    again = [ids[0], "new", ids[9_000], "new", ids[-1], "\udcff"]
    assert seen.add_all(again) == [False, True, False, False, False, True]
    assert seen.unseen([*ids[::997], "dir0/other.txt", "new", "\udcff"]) == ["dir0/other.txt"]
