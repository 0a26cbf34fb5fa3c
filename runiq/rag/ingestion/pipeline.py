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

A group is embedded in one provider call. When that fails, the documents are embedded one by one to
find the failing ones. A timeout or an unavailable provider is the provider's failure, not a
document's: after two such calls in a row the run stops calling the provider, and the remaining
documents fail with ``embedding_failed`` at once (they keep their previous version; the next run
retries them). So a hanging provider costs a run two timeouts instead of one per document, and a
document that alone times out costs a timeout or two without failing the documents after it.
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
from runiq.rag.embeddings.batching import EmbeddingBatcher
from runiq.rag.errors import (
    ProviderError,
    ProviderTimeoutError,
    ProviderUnavailableError,
    RagValidationError,
    VectorStoreError,
)
from runiq.rag.ingestion.operation import MAX_REPORTED_FAILURES, RagIngestionFailure, RagIngestionProgress
from runiq.rag.runtime import IndexResources
from runiq.rag.sources.base import read_all
from runiq.rag.stores.base import StoredDocument

__all__ = ["IngestionPipeline", "ProgressTracker", "safe_id"]

log = structlog.get_logger(__name__)

# At most this many documents are prepared per worker hop, so a cancelled run's hop ends soon.
_PREPARE_DOCUMENTS = 256
# Failures that say nothing about the document; this many in a row and the run stops calling the provider.
_PROVIDER_WIDE = (ProviderTimeoutError, ProviderUnavailableError)
_OUTAGE_CALLS = 2


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
        self._outage_calls = 0
        self._outage: Exception | None = None  # set when the run stopped calling the provider

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
        texts = [chunk.content for pending in group for chunk in pending.chunks]
        if embedder is None or not texts:
            return [None] * len(group)
        if self._outage is not None:
            return _each(group, embedder, self._outage)
        try:
            matrix = await self._embed(embedder, texts)
        except Exception as exc:
            if len(group) == 1:
                return _each(group, embedder, exc)
            return await self._isolate(group, embedder)
        out: list[_Vectors] = []
        offset = 0
        for pending in group:
            out.append(matrix[offset : offset + len(pending.chunks)])
            offset += len(pending.chunks)
        return out

    async def _isolate(self, group: list[_Pending], embedder: EmbeddingBatcher) -> list[_Vectors]:
        """Embed each document on its own to find the failing ones, until the provider is declared down."""
        out: list[_Vectors] = []
        for pending in group:
            if not pending.chunks:
                out.append(_empty(embedder.client.dimensions))
            elif self._outage is not None:
                out.append(self._outage)
            else:
                try:
                    out.append(await self._embed(embedder, [chunk.content for chunk in pending.chunks]))
                except Exception as exc:
                    out.append(exc)
        return out

    async def _embed(self, embedder: EmbeddingBatcher, texts: list[str]) -> FloatMatrix:
        """One provider call, counted. Two provider-wide failures in a row (a timeout, an unavailable
        provider) declare the provider down for the rest of the run; any other outcome resets the count."""
        calls = embedder.calls
        try:
            matrix = await embedder.embed(texts)
        except _PROVIDER_WIDE as exc:
            self._outage_calls += 1
            if self._outage_calls >= _OUTAGE_CALLS and self._outage is None:
                self._outage = exc
                log.warning("ingestion.embedding_stopped", index=self._name, error=type(exc).__name__)
            raise
        except Exception:
            self._outage_calls = 0
            raise
        finally:
            self._tracker.add(embedding_calls=embedder.calls - calls)
        self._outage_calls = 0
        return matrix

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


def _each(group: Sequence[_Pending], embedder: EmbeddingBatcher, failure: Exception) -> list[_Vectors]:
    """The group's failure for every document that has chunks; a document without chunks needs no vectors."""
    return [failure if pending.chunks else _empty(embedder.client.dimensions) for pending in group]


def _empty(dims: int) -> FloatMatrix:
    return np.empty((0, dims), dtype=np.float32)
