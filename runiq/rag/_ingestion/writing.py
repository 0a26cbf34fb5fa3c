"""The writing stage: each embedded group in one transaction where the store offers bulk writes.

A store with :class:`BulkDocumentWriter` gets the group's documents in one ``replace_documents``
call (all or nothing, each document atomic); if that fails, the documents are written one by one so
only the failing ones fail. A store without it gets one ``replace_document`` per document.
"""

from __future__ import annotations

from collections.abc import Sequence

from runiq.rag._errors import ProviderError, VectorStoreError
from runiq.rag._ingestion.embedding import Vectors, empty_vectors
from runiq.rag._ingestion.preparing import Pending
from runiq.rag._ingestion.progress import ProgressTracker
from runiq.rag._runtime import IndexResources
from runiq.rag._stores.base import BulkDocumentWriter, DocumentWrite, StoredDocument

__all__ = ["GroupWriter", "failure_code"]


def failure_code(exc: Exception) -> str:
    if isinstance(exc, ProviderError):
        return "embedding_failed"
    if isinstance(exc, VectorStoreError):
        return "store_failed"
    return "document_failed"


class GroupWriter:
    def __init__(self, resources: IndexResources, tracker: ProgressTracker) -> None:
        self._resources = resources
        self._tracker = tracker
        self._name = resources.definition.name

    async def write(self, group: Sequence[Pending], vectors: Sequence[Vectors]) -> None:
        ready: list[tuple[Pending, DocumentWrite]] = []
        for pending, matrix in zip(group, vectors, strict=True):
            if isinstance(matrix, Exception):
                self._failed(pending, matrix)
            else:
                ready.append((pending, self._document_write(pending, matrix)))
        store = self._resources.store
        if len(ready) > 1 and isinstance(store, BulkDocumentWriter):
            try:
                await store.replace_documents(self._name, [write for _, write in ready])
            except Exception:  # noqa: S110 - the group fails as a whole; writing one by one finds the culprits
                pass
            else:
                for pending, _ in ready:
                    self._written(pending)
                return
        for pending, write in ready:
            try:
                await store.replace_document(self._name, write.document, write.chunks, write.vectors)
            except Exception as exc:  # one document's failure never aborts the others
                self._failed(pending, exc)
            else:
                self._written(pending)

    def _document_write(self, pending: Pending, vectors: Vectors) -> DocumentWrite:
        document = pending.document
        stored = StoredDocument(
            document_id=document.document_id,
            content_hash=pending.content_hash,
            title=document.title,
            metadata=document.metadata,
            stamp=pending.stamp,
        )
        embedder = self._resources.embedder
        if embedder is not None and vectors is None:
            vectors = empty_vectors(embedder.client.dimensions)
        assert not isinstance(vectors, Exception)
        return DocumentWrite(stored, pending.chunks, vectors)

    def _written(self, pending: Pending) -> None:
        outcome = {"added_documents": 1} if pending.stored_hash is None else {"updated_documents": 1}
        embedded = len(pending.chunks) if self._resources.embedder is not None else 0
        self._tracker.add(
            processed_documents=1, produced_chunks=len(pending.chunks), produced_embeddings=embedded, **outcome
        )

    def _failed(self, pending: Pending, exc: Exception) -> None:
        self._tracker.document_failed(self._name, pending.document.document_id, failure_code(exc), type(exc).__name__)
