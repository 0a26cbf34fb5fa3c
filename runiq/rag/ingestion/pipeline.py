"""The incremental ingestion pipeline: source -> chunk -> embed (batched) -> store.

Incremental by content hash: the hash covers the document content and the configuration that turns
it into chunks and vectors (chunking options, embedding model, dimension, metric), so an unchanged
document is neither re-chunked nor re-embedded, and a configuration change re-ingests everything.
Each document is written with one atomic ``replace_document``, so a crash or cancellation leaves
every document at its old version or its new one. Documents gone from every source are deleted; a
document that failed keeps its previous version.

Preparing documents (content hash, chunking) is CPU work: it runs in a worker thread, one embedding
group at a time, never on the event loop. Whatever goes wrong with one document is that document's
failure, with a content-free code, and the run goes on: ``invalid_text`` (a lone surrogate, which no
provider or durable store accepts), ``chunking_failed``, ``embedding_failed``, ``store_failed``.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import numpy as np
import structlog

from runiq.rag.chunking.base import chunker_for
from runiq.rag.documents import RagChunk, RagDocument
from runiq.rag.embeddings.base import FloatMatrix
from runiq.rag.errors import ProviderError, RagValidationError, VectorStoreError
from runiq.rag.ingestion.operation import RagIngestionFailure, RagIngestionProgress
from runiq.rag.runtime import IndexResources
from runiq.rag.stores.base import StoredDocument

__all__ = ["IngestionPipeline", "ProgressTracker", "safe_id"]

log = structlog.get_logger(__name__)

# At most this many documents are prepared per worker hop, so a cancelled run's hop ends soon.
_PREPARE_DOCUMENTS = 256


def safe_id(value: str) -> str:
    """A short hash for logs: document ids are often paths."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()[:12]


@dataclass(slots=True)
class ProgressTracker:
    progress: RagIngestionProgress = field(default_factory=RagIngestionProgress)
    last_failure: RagIngestionFailure | None = None

    def add(self, **deltas: int) -> None:
        current = self.progress
        self.progress = replace(current, **{k: getattr(current, k) + v for k, v in deltas.items()})

    def fail(self, document_id: str | None, code: str, source_kind: str | None = None) -> None:
        self.add(processed_documents=1, failed_documents=1)
        self.last_failure = RagIngestionFailure(
            code=code, timestamp=datetime.now(UTC), document_id=document_id, source_kind=source_kind
        )


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


@dataclass(frozen=True, slots=True)
class _Unusable:
    """A document that could not be prepared: a stable code and the exception's class name."""

    document: RagDocument
    code: str
    error: str


# What preparing one document gives: work to do, a failure, or None when the stored version is current.
_Prepared = _Pending | _Unusable | None
_Vectors = FloatMatrix | Exception | None


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
            result = await source.read()
            self._tracker.add(discovered_documents=len(result.documents) + len(result.failures))
            for failure in result.failures:
                seen.add(failure.document_id)
                self._tracker.fail(failure.document_id, failure.code, source.source_kind)
            documents: list[RagDocument] = []
            for document in sorted(result.documents, key=lambda d: d.document_id):
                if document.document_id in seen:
                    self._tracker.fail(document.document_id, "duplicate_document_id", source.source_kind)
                    continue
                seen.add(document.document_id)
                documents.append(document)
            await self._ingest(documents, stored)
        stale = sorted(set(stored) - seen)
        if stale:
            deleted = await store.delete_documents(self._name, stale)
            self._tracker.add(deleted_documents=deleted)

    async def _ingest(self, documents: Sequence[RagDocument], stored: Mapping[str, str]) -> None:
        group: list[_Pending] = []
        position = 0
        while position < len(documents):
            room = self._group_chunks - sum(len(p.chunks) for p in group)
            prepared, position = await asyncio.to_thread(self._prepare_some, documents, position, stored, room)
            for outcome in prepared:
                if outcome is None:
                    self._tracker.add(processed_documents=1, skipped_documents=1)
                elif isinstance(outcome, _Unusable):
                    self._failed(outcome.document, outcome.code, outcome.error)
                else:
                    group.append(outcome)
            if sum(len(p.chunks) for p in group) >= self._group_chunks:
                await self._write_group(group)
                group = []
        if group:
            await self._write_group(group)

    def _prepare_some(
        self, documents: Sequence[RagDocument], start: int, stored: Mapping[str, str], room: int
    ) -> tuple[list[_Prepared], int]:
        """In a worker thread: prepare documents from ``start`` until ``room`` chunks are ready."""
        prepared: list[_Prepared] = []
        chunks = 0
        index = start
        while index < len(documents) and chunks < room and index - start < _PREPARE_DOCUMENTS:
            document = documents[index]
            outcome = self._prepare(document, stored.get(document.document_id))
            if isinstance(outcome, _Pending):
                chunks += len(outcome.chunks)
            prepared.append(outcome)
            index += 1
        return prepared, index

    def _prepare(self, document: RagDocument, stored_hash: str | None) -> _Prepared:
        try:
            content_hash = document.content_hash(self._fingerprint)
        except RagValidationError:
            return _Unusable(document, "invalid_text", "RagValidationError")
        except Exception as exc:
            return _Unusable(document, "document_failed", type(exc).__name__)
        if stored_hash == content_hash:
            return None
        try:
            chunks = chunker_for(document, self._resources.definition.chunking).chunk(document)
        except Exception as exc:
            return _Unusable(document, "chunking_failed", type(exc).__name__)
        return _Pending(document=document, stored_hash=stored_hash, content_hash=content_hash, chunks=chunks)

    async def _write_group(self, group: list[_Pending]) -> None:
        vectors = await self._embed_group(group)
        for pending, matrix in zip(group, vectors, strict=True):
            if isinstance(matrix, Exception):
                self._failed(pending.document, _failure_code(matrix), type(matrix).__name__)
                continue
            try:
                await self._write(pending, matrix)
            except Exception as exc:  # one document's failure never aborts the batch
                self._failed(pending.document, _failure_code(exc), type(exc).__name__)

    async def _embed_group(self, group: list[_Pending]) -> list[_Vectors]:
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
        out: list[_Vectors] = []
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

    def _failed(self, document: RagDocument, code: str, error: str) -> None:
        log.warning(
            "ingestion.document_failed",
            index=self._name,
            document=safe_id(document.document_id),
            code=code,
            error=error,
        )
        self._tracker.fail(document.document_id, code)


def _empty(dims: int) -> FloatMatrix:
    return np.empty((0, dims), dtype=np.float32)
