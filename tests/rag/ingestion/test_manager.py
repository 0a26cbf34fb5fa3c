"""RagIngestionManager: start/wait/status/cancel, conflicts, terminal states and readiness rules."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from runiq.errors import NoActiveIngestionError, ProviderTimeoutError, VectorStoreUnavailableError
from runiq.hosting import Host, HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexNotFoundError,
    IngestionConflictError,
    RagDocument,
    RagIndexReadiness,
    RagIngestionManager,
    RagIngestionReason,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._embeddings.base import FloatMatrix
from runiq.rag.providers import EmbeddingInputKind, HashingEmbedder, InMemoryVectorStore, RagChunk, StoredDocument
from runiq.rag.testing import FailingEmbedder

R, S = RagIndexReadiness, RagIngestionState


class SwitchableEmbedder(HashingEmbedder):
    """Hashing embedder that can be told to fail every call, or park calls on an event."""

    def __init__(self) -> None:
        super().__init__(32)
        self.failing = False
        self.gate: asyncio.Event | None = None
        self.parked = asyncio.Event()

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        if self.gate is not None:
            self.parked.set()
            await self.gate.wait()
        if self.failing:
            raise RuntimeError("provider echoed input: " + " | ".join(texts))
        return self.embed_sync(texts)

    def hold(self) -> asyncio.Event:
        self.gate = asyncio.Event()
        self.parked = asyncio.Event()
        return self.gate


class DownStore(InMemoryVectorStore):
    """Accepts the index but every document write fails as if the database were down."""

    async def replace_document(
        self, index_name: str, document: StoredDocument, chunks: Sequence[RagChunk], vectors: Any
    ) -> None:
        raise VectorStoreUnavailableError("fake-db")

    async def replace_documents(self, index_name: str, items: Sequence[Any]) -> None:
        raise VectorStoreUnavailableError("fake-db")


@pytest.fixture
def embedder() -> SwitchableEmbedder:
    return SwitchableEmbedder()


@pytest.fixture
async def host(index_host: Callable[..., Host], source: Any, embedder: SwitchableEmbedder) -> AsyncIterator[Host]:
    source.set(a="Remote work is allowed.", b="Expenses need receipts.", c="CS1503 in filename.cs")
    built = index_host(
        lambda index: index.add_source(source).use_embedding("switch").use_in_memory_vector_store(),
        embeddings={"switch": embedder},
    )
    async with built:
        yield built


@pytest.fixture
def manager(host: Host) -> RagIngestionManager:
    return host.services.get(RagIngestionManager)


async def _parked(embedder: SwitchableEmbedder) -> None:
    await asyncio.wait_for(embedder.parked.wait(), 2)


# -- API -------------------------------------------------------------------------------------


async def test_start_returns_a_running_snapshot_and_wait_the_terminal_one(manager: RagIngestionManager) -> None:
    """start() returns RUNNING with an id and reason; wait() returns the same operation COMPLETED with counts."""
    started = await manager.start("docs")
    assert started.state is S.RUNNING and started.reason is RagIngestionReason.MANUAL
    assert started.completed_at is None and started.duration_seconds is None
    finished = await manager.wait("docs")
    assert finished.operation_id == started.operation_id
    assert finished.state is S.COMPLETED
    assert finished.completed_at is not None and finished.duration_seconds is not None
    progress = finished.progress
    assert (progress.discovered_documents, progress.processed_documents, progress.added_documents) == (3, 3, 3)
    assert progress.failed_documents == 0 and progress.produced_chunks == 3 and progress.produced_embeddings == 3
    status = manager.status("docs")
    assert status.active_operation is None and status.last_operation == finished
    assert status.readiness is R.READY


async def test_wait_after_completion_returns_the_last_operation(manager: RagIngestionManager) -> None:
    """wait() with nothing running returns the last finished operation."""
    finished = await manager.run("docs")
    assert await manager.wait("docs") == finished


async def test_wait_before_any_run_is_no_active_ingestion(manager: RagIngestionManager) -> None:
    """wait() on an index that never ran raises NoActiveIngestionError."""
    with pytest.raises(NoActiveIngestionError):
        await manager.wait("docs")


async def test_status_before_any_run_is_not_initialized(manager: RagIngestionManager) -> None:
    """A registered index that never ran is NOT_INITIALIZED with no operations."""
    status = manager.status("docs")
    assert status.readiness is R.NOT_INITIALIZED
    assert status.active_operation is None and status.last_operation is None
    assert status.index_name == "docs"


async def test_unknown_index_is_index_not_found_everywhere(manager: RagIngestionManager) -> None:
    """start, wait, status and cancel on an unregistered name raise IndexNotFoundError."""
    with pytest.raises(IndexNotFoundError):
        await manager.start("missing")
    with pytest.raises(IndexNotFoundError):
        await manager.wait("missing")
    with pytest.raises(IndexNotFoundError):
        manager.status("missing")
    with pytest.raises(IndexNotFoundError):
        await manager.cancel("missing")


async def test_second_start_while_running_is_a_conflict(
    manager: RagIngestionManager, embedder: SwitchableEmbedder
) -> None:
    """A start while an operation is active raises IngestionConflictError naming the active operation."""
    gate = embedder.hold()
    first = await manager.start("docs")
    await _parked(embedder)
    with pytest.raises(IngestionConflictError) as raised:
        await manager.start("docs", RagIngestionReason.SCHEDULED)
    assert raised.value.operation_id == first.operation_id
    assert raised.value.index_name == "docs"
    gate.set()
    assert (await manager.wait("docs")).operation_id == first.operation_id
    assert (await manager.run("docs")).state is S.COMPLETED  # a later run is allowed


async def test_fifty_concurrent_starts_give_one_run_and_49_conflicts(manager: RagIngestionManager) -> None:
    """Concurrent starts: exactly one operation, every other call a conflict."""
    results = await asyncio.gather(*(manager.start("docs") for _ in range(50)), return_exceptions=True)
    started = [r for r in results if not isinstance(r, BaseException)]
    conflicts = [r for r in results if isinstance(r, IngestionConflictError)]
    assert len(started) == 1 and len(conflicts) == 49
    assert (await manager.wait("docs")).operation_id == started[0].operation_id


async def test_cancel_with_nothing_running_is_no_active_ingestion(manager: RagIngestionManager) -> None:
    """cancel() before any run, or after the run finished, raises NoActiveIngestionError; COMPLETED stays."""
    with pytest.raises(NoActiveIngestionError):
        await manager.cancel("docs")
    await manager.run("docs")
    with pytest.raises(NoActiveIngestionError):
        await manager.cancel("docs")
    assert manager.status("docs").last_operation.state is S.COMPLETED  # type: ignore[union-attr]


async def test_cancel_ends_cancelled_passing_through_cancelling(
    manager: RagIngestionManager, embedder: SwitchableEmbedder
) -> None:
    """cancel() marks the run CANCELLING at once and returns it CANCELLED; the first run leaves NOT_INITIALIZED."""
    embedder.hold()
    started = await manager.start("docs")
    await _parked(embedder)
    cancelling = asyncio.create_task(manager.cancel("docs"))
    await asyncio.sleep(0)
    active = manager.status("docs").active_operation
    assert active is not None and active.state is S.CANCELLING
    cancelled = await asyncio.wait_for(cancelling, 2)
    assert cancelled.state is S.CANCELLED and cancelled.operation_id == started.operation_id
    status = manager.status("docs")
    assert status.active_operation is None and status.last_operation == cancelled
    assert status.readiness is R.NOT_INITIALIZED


async def test_concurrent_cancels_share_one_outcome(manager: RagIngestionManager, embedder: SwitchableEmbedder) -> None:
    """Two cancels of the same run both return the same CANCELLED operation."""
    embedder.hold()
    await manager.start("docs")
    await _parked(embedder)
    first, second = await asyncio.wait_for(asyncio.gather(manager.cancel("docs"), manager.cancel("docs")), 2)
    assert first.state is second.state is S.CANCELLED
    assert first.operation_id == second.operation_id


async def test_cancel_right_after_start_is_cancelled(manager: RagIngestionManager) -> None:
    """Cancelling before the run took its first step still ends CANCELLED, not stuck RUNNING."""
    await manager.start("docs")
    async with asyncio.timeout(2):
        cancelled = await manager.cancel("docs")  # runs before the run task's first step
    assert cancelled.state is S.CANCELLED
    assert cancelled.progress.processed_documents == 0
    assert manager.status("docs").active_operation is None
    assert (await manager.run("docs")).state is S.COMPLETED


# -- readiness -------------------------------------------------------------------------------


async def test_readiness_initializing_then_ready(manager: RagIngestionManager, embedder: SwitchableEmbedder) -> None:
    """During the first run readiness is INITIALIZING; after it completes, READY."""
    gate = embedder.hold()
    await manager.start("docs")
    await _parked(embedder)
    status = manager.status("docs")
    assert status.readiness is R.INITIALIZING
    assert status.active_operation is not None and status.active_operation.state is S.RUNNING
    gate.set()
    await manager.wait("docs")
    assert manager.status("docs").readiness is R.READY


async def test_readiness_stays_ready_while_a_later_run_is_active(
    manager: RagIngestionManager, embedder: SwitchableEmbedder, source: Any
) -> None:
    """An active run never hides usable content: READY while the second run works."""
    await manager.run("docs")
    source.set(a="Changed text.", b="Expenses need receipts.", c="CS1503 in filename.cs")
    gate = embedder.hold()
    await manager.start("docs")
    await _parked(embedder)
    assert manager.status("docs").readiness is R.READY
    gate.set()
    await manager.wait("docs")


async def test_cancel_after_a_usable_run_keeps_ready(
    manager: RagIngestionManager, embedder: SwitchableEmbedder, source: Any
) -> None:
    """A cancelled run after a completed one leaves the index READY."""
    await manager.run("docs")
    source.set(a="Changed text.")
    embedder.hold()
    await manager.start("docs")
    await _parked(embedder)
    assert (await manager.cancel("docs")).state is S.CANCELLED
    assert manager.status("docs").readiness is R.READY


async def test_partial_failure_is_partially_completed_and_degraded(
    index_host: Callable[..., Host], source: Any
) -> None:
    """Some documents failing: PARTIALLY_COMPLETED, readiness DEGRADED, a failure code and no raw message."""
    source.set(a="Remote work.", b="BROKEN document text", c="Expenses.")
    host = index_host(
        lambda index: index.add_source(source).use_embedding("failing").use_in_memory_vector_store(),
        embeddings={"failing": FailingEmbedder(32, fail_on="BROKEN")},
    )
    async with host:
        manager = host.services.get(RagIngestionManager)
        operation = await manager.run("docs")
        assert operation.state is S.PARTIALLY_COMPLETED
        assert (operation.progress.added_documents, operation.progress.failed_documents) == (2, 1)
        failure = operation.last_failure
        assert failure is not None and failure.code == "document_failed" and failure.document_id == "b"
        assert "echoed" not in repr(operation) and "BROKEN document" not in repr(operation)
        assert not hasattr(failure, "message")
        assert manager.status("docs").readiness is R.DEGRADED


async def test_every_document_failing_is_failed(manager: RagIngestionManager, embedder: SwitchableEmbedder) -> None:
    """If every processed document fails, the run is FAILED and a never-ready index is FAILED."""
    embedder.failing = True
    operation = await manager.run("docs")
    assert operation.state is S.FAILED
    assert operation.progress.failed_documents == operation.progress.processed_documents == 3
    assert manager.status("docs").readiness is R.FAILED


async def test_failure_after_a_usable_run_is_degraded(
    manager: RagIngestionManager, embedder: SwitchableEmbedder, source: Any
) -> None:
    """A failed run after a completed one leaves the index DEGRADED, not FAILED."""
    await manager.run("docs")
    source.set(a="v2 a", b="v2 b", c="v2 c")
    embedder.failing = True
    assert (await manager.run("docs")).state is S.FAILED
    assert manager.status("docs").readiness is R.DEGRADED


async def test_missing_source_fails_the_run_with_a_code(index_host: Callable[..., Host], tmp_path: Path) -> None:
    """A source that cannot be enumerated fails the run: FAILED, code 'ingestion_failed', readiness FAILED."""
    host = index_host(
        lambda index: (
            index.use_directory(tmp_path / "missing", "*.md")
            .use_embedding("hashing", dimensions=16)
            .use_in_memory_vector_store()
        )
    )
    async with host:
        manager = host.services.get(RagIngestionManager)
        operation = await manager.run("docs")
        assert operation.state is S.FAILED
        assert operation.last_failure is not None and operation.last_failure.code == "ingestion_failed"
        assert str(tmp_path) not in repr(operation)
        assert manager.status("docs").readiness is R.FAILED


async def test_store_down_fails_every_document_with_store_failed(index_host: Callable[..., Host], source: Any) -> None:
    """Writes failing in the store: FAILED with code 'store_failed'."""
    source.set(a="x", b="y")
    host = index_host(
        lambda index: index.add_source(source).use_embedding("hashing", dimensions=16).use_vector_store("down"),
        stores={"down": DownStore()},
    )
    async with host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is S.FAILED
        assert operation.last_failure is not None and operation.last_failure.code == "store_failed"


async def test_provider_timeout_fails_documents_with_embedding_failed(
    index_host: Callable[..., Host], source: Any
) -> None:
    """An embedding call exceeding its timeout is a ProviderTimeoutError: documents fail with 'embedding_failed'."""

    class Stuck(HashingEmbedder):
        async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
            await asyncio.sleep(5)
            return self.embed_sync(texts)

    source.set(a="x", b="y")
    host = index_host(
        lambda index: (
            index.add_source(source)
            .use_embedding("stuck")
            .use_in_memory_vector_store()
            .configure_embedding_batching(timeout_seconds=0.02)
        ),
        embeddings={"stuck": Stuck(16)},
    )
    async with host:
        operation = await asyncio.wait_for(host.services.get(RagIngestionManager).run("docs"), 3)
        assert operation.state is S.FAILED
        assert operation.last_failure is not None and operation.last_failure.code == "embedding_failed"


async def test_provider_error_type_reaches_the_failure_code(index_host: Callable[..., Host], source: Any) -> None:
    """A ProviderError raised by the client is categorised 'embedding_failed' (not a generic failure)."""

    class Refusing(HashingEmbedder):
        async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
            raise ProviderTimeoutError("refusing", 1.0)

    source.set(a="x")
    host = index_host(
        lambda index: index.add_source(source).use_embedding("refusing").use_in_memory_vector_store(),
        embeddings={"refusing": Refusing(16)},
    )
    async with host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.last_failure is not None and operation.last_failure.code == "embedding_failed"


async def test_in_memory_history_is_per_process(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Alpha.")
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_directory(tmp_path, "*.md").use_embedding(HashingEmbedding()).use_in_memory_vector_store()
            ),
        ),
    )
    async with builder.build() as host:
        manager = host.services.get(RagIngestionManager)
        ops = [await manager.run("docs") for _ in range(3)]
        history = await manager.history("docs", limit=2)
        assert [op.operation_id for op in history] == [ops[2].operation_id, ops[1].operation_id]
        assert (await manager.health("docs")).healthy


async def test_document_api_ingests_replaces_skips_and_deletes(tmp_path: Path) -> None:
    """Single documents at run time: incremental by content hash and atomic, like a run."""
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: index.use_documents([]).use_embedding(HashingEmbedding()).use_in_memory_vector_store(),
        ),
    )
    async with builder.build() as host:
        manager = host.services.get(RagIngestionManager)
        retriever = host.services.get(RagRetriever)
        doc = RagDocument(document_id="policy.md", content="POL-HR-014 remote work.")
        added = await manager.ingest_documents("docs", [doc])
        assert (added.progress.added_documents, added.progress.embedding_calls) == (1, 1)
        again = await manager.ingest_documents("docs", [doc])
        assert (again.progress.skipped_documents, again.progress.embedding_calls) == (1, 0)
        changed = await manager.ingest_documents(
            "docs", [RagDocument(document_id="policy.md", content="CS1503 build error.")]
        )
        assert changed.progress.updated_documents == 1
        hits = (
            await retriever.retrieve(RagQuery(index_name="docs", text="CS1503", mode=RagRetrievalMode.LEXICAL))
        ).hits
        assert [h.document_id for h in hits] == ["policy.md"]
        bad = await manager.ingest_documents("docs", [RagDocument(document_id="bad.md", content="x \ud800 y")])
        assert [(f.document_id, f.code) for f in bad.failures] == [("bad.md", "invalid_text")]
        gone = await manager.delete_documents("docs", ["policy.md", "missing.md"])
        assert gone.progress.deleted_documents == 1
        assert not (
            await retriever.retrieve(RagQuery(index_name="docs", text="CS1503", mode=RagRetrievalMode.LEXICAL))
        ).hits
        assert manager.status("docs").last_operation is None  # document calls are not runs


async def test_document_api_conflicts_with_a_running_operation(host: Host, embedder: SwitchableEmbedder) -> None:
    manager = host.services.get(RagIngestionManager)
    embedder.hold()
    started = await manager.start("docs")
    await embedder.parked.wait()
    with pytest.raises(IngestionConflictError) as caught:
        await manager.ingest_documents("docs", [RagDocument(document_id="x", content="y")])
    assert caught.value.operation_id == started.operation_id
    with pytest.raises(IngestionConflictError):
        await manager.delete_documents("docs", ["a"])
    await manager.cancel("docs")
    assert (await manager.delete_documents("docs", ["a"])).progress.deleted_documents in (0, 1)


async def test_a_run_waits_for_a_document_call_in_progress(
    index_host: Callable[..., Host], source: Any, gated_embedder_type: Any
) -> None:
    gated = gated_embedder_type(16, gate_on="gate")
    source.set(a="alpha")
    host = index_host(
        lambda index: index.add_source(source).use_embedding("gated").use_in_memory_vector_store(),
        embeddings={"gated": gated},
    )
    async with host:
        manager = host.services.get(RagIngestionManager)
        call = asyncio.create_task(manager.ingest_documents("docs", [RagDocument(document_id="g", content="gate")]))
        await gated.reached.wait()
        await manager.start("docs")  # accepted, but it runs after the document call
        await asyncio.sleep(0.05)
        active = manager.status("docs").active_operation
        assert active is not None and active.progress.discovered_documents == 0
        gated.release.set()
        assert (await call).progress.added_documents == 1
        finished = await manager.wait("docs")
        assert finished.state is S.COMPLETED
        assert finished.progress.deleted_documents == 1  # 'g' is in no source: the run removes it
