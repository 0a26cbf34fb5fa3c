"""The incremental ingestion pipeline: source -> chunk -> embed (batched) -> store.

Incremental by content hash: the hash covers the document content and the configuration that turns
it into chunks and vectors (chunking options, embedding model, dimension, metric), so an unchanged
document is neither re-chunked nor re-embedded, and a configuration change re-ingests everything.
Each document is written with one atomic ``replace_document``, so a crash or cancellation leaves
every document at its old version or its new one. Documents gone from every source are deleted; a
document that failed to read keeps its previous version.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import numpy as np
import structlog

from runiq.rag.chunking.base import chunker_for
from runiq.rag.documents import RagChunk, RagDocument
from runiq.rag.embeddings.base import FloatMatrix
from runiq.rag.errors import ProviderError, VectorStoreError
from runiq.rag.ingestion.operation import MAX_REPORTED_FAILURES, RagIngestionFailure, RagIngestionProgress
from runiq.rag.runtime import IndexResources
from runiq.rag.sources.base import read_all
from runiq.rag.stores.base import StoredDocument

__all__ = ["IngestionPipeline", "ProgressTracker", "safe_id"]

log = structlog.get_logger(__name__)


def safe_id(value: str) -> str:
    """A short hash for logs: document ids are often paths."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


@dataclass(slots=True)
class ProgressTracker:
    progress: RagIngestionProgress = field(default_factory=RagIngestionProgress)
    last_failure: RagIngestionFailure | None = None
    failures: list[RagIngestionFailure] = field(default_factory=list)

    def add(self, **deltas: int) -> None:
        current = self.progress
        self.progress = replace(current, **{k: getattr(current, k) + v for k, v in deltas.items()})

    def fail(self, document_id: str | None, code: str, source_kind: str | None = None) -> None:
        self.add(processed_documents=1, failed_documents=1)
        self.last_failure = RagIngestionFailure(
            code=code, timestamp=datetime.now(UTC), document_id=document_id, source_kind=source_kind
        )
        if len(self.failures) < MAX_REPORTED_FAILURES:
            self.failures.append(self.last_failure)


def _failure_code(exc: Exception) -> str:
    if isinstance(exc, ProviderError):
        return "embedding_failed"
    if isinstance(exc, VectorStoreError):
        return "store_failed"
    return "document_failed"


@dataclass(slots=True)
class _Pending:
    """A new or changed document, chunked, waiting for vectors and its atomic write."""

    document: RagDocument
    stored_hash: str | None
    content_hash: str
    chunks: list[RagChunk]


class IngestionPipeline:
    """Runs one ingestion of one index. Work is grouped across documents so small documents still fill
    embedding batches; each document is then written on its own, atomically."""

    def __init__(self, resources: IndexResources, tracker: ProgressTracker) -> None:
        self._resources = resources
        self._tracker = tracker
        self._name = resources.definition.name
        self._fingerprint = resources.configuration_fingerprint
        definition = resources.definition
        # One group fills every concurrent embedding batch once; it bounds memory for large sources.
        self._group_chunks = definition.embedding_batch_size * definition.embedding_concurrency

    async def run(self) -> None:
        store = self._resources.store
        await store.ensure_index(self._resources.spec)
        stored = dict(await store.document_hashes(self._name))
        seen: set[str] = set()
        for source in self._resources.definition.sources:
            result = await read_all(source)
            self._tracker.add(discovered_documents=len(result.documents) + len(result.failures))
            for failure in result.failures:
                seen.add(failure.document_id)
                self._tracker.fail(failure.document_id, failure.code, source.source_kind)
            group: list[_Pending] = []
            for document in sorted(result.documents, key=lambda d: d.document_id):
                if document.document_id in seen:
                    self._tracker.fail(document.document_id, "duplicate_document_id", source.source_kind)
                    continue
                seen.add(document.document_id)
                pending = self._prepare(document, stored.get(document.document_id))
                if pending is None:
                    continue
                group.append(pending)
                if sum(len(p.chunks) for p in group) >= self._group_chunks:
                    await self._write_group(group)
                    group = []
            if group:
                await self._write_group(group)
        stale = sorted(set(stored) - seen)
        if stale:
            deleted = await store.delete_documents(self._name, stale)
            self._tracker.add(deleted_documents=deleted)

    def _prepare(self, document: RagDocument, stored_hash: str | None) -> _Pending | None:
        content_hash = document.content_hash(self._fingerprint)
        if stored_hash == content_hash:
            self._tracker.add(processed_documents=1, skipped_documents=1)
            return None
        try:
            chunks = chunker_for(document, self._resources.definition.chunking).chunk(document)
        except Exception as exc:
            self._failed(document, exc)
            return None
        return _Pending(document=document, stored_hash=stored_hash, content_hash=content_hash, chunks=chunks)

    async def _write_group(self, group: list[_Pending]) -> None:
        vectors = await self._embed_group(group)
        for pending, matrix in zip(group, vectors, strict=True):
            if isinstance(matrix, Exception):
                self._failed(pending.document, matrix)
                continue
            try:
                await self._write(pending, matrix)
            except Exception as exc:  # one document's failure never aborts the batch
                self._failed(pending.document, exc)

    async def _embed_group(self, group: list[_Pending]) -> list[FloatMatrix | Exception | None]:
        embedder = self._resources.embedder
        if embedder is None:
            return [None] * len(group)
        texts = [chunk.content for pending in group for chunk in pending.chunks]
        if not texts:
            return [None] * len(group)
        calls = embedder.calls
        try:
            matrix = await embedder.embed(texts)
        except Exception:
            self._tracker.add(embedding_calls=embedder.calls - calls)
            # Isolate the failing document(s): embed each one on its own.
            return [await self._embed_one(pending) for pending in group]
        self._tracker.add(embedding_calls=embedder.calls - calls)
        out: list[FloatMatrix | Exception | None] = []
        offset = 0
        for pending in group:
            out.append(matrix[offset : offset + len(pending.chunks)])
            offset += len(pending.chunks)
        return out

    async def _embed_one(self, pending: _Pending) -> FloatMatrix | Exception:
        embedder = self._resources.embedder
        assert embedder is not None
        if not pending.chunks:
            return _empty(embedder.client.dimensions)
        calls = embedder.calls
        try:
            return await embedder.embed([chunk.content for chunk in pending.chunks])
        except Exception as exc:
            return exc
        finally:
            self._tracker.add(embedding_calls=embedder.calls - calls)

    async def _write(self, pending: _Pending, vectors: FloatMatrix | None) -> None:
        document = pending.document
        stored = StoredDocument(
            document_id=document.document_id,
            content_hash=pending.content_hash,
            title=document.title,
            metadata=document.metadata,
        )
        embedder = self._resources.embedder
        if embedder is not None and vectors is None:
            vectors = _empty(embedder.client.dimensions)
        await self._resources.store.replace_document(self._name, stored, pending.chunks, vectors)
        outcome = {"added_documents": 1} if pending.stored_hash is None else {"updated_documents": 1}
        self._tracker.add(
            processed_documents=1,
            produced_chunks=len(pending.chunks),
            produced_embeddings=len(pending.chunks) if embedder is not None else 0,
            **outcome,
        )

    def _failed(self, document: RagDocument, exc: BaseException) -> None:
        code = _failure_code(exc) if isinstance(exc, Exception) else "document_failed"
        log.warning(
            "ingestion.document_failed",
            index=self._name,
            document=safe_id(document.document_id),
            code=code,
            error=type(exc).__name__,
        )
        self._tracker.fail(document.document_id, code)


def _empty(dims: int) -> FloatMatrix:
    return np.empty((0, dims), dtype=np.float32)
