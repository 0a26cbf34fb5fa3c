"""The embedding stage: one provider call per group, isolation of failing documents, outage detection.

A group is embedded in one call (the batcher sorts its texts by length and splits them into concurrent
batches). When that fails, the documents are embedded one by one to find the failing ones. A timeout or
an unavailable provider is the provider's failure, not a document's: after two such calls in a row the
run stops calling the provider, and the remaining documents fail with ``embedding_failed`` at once (they
keep their previous version; the next run retries them). So a hanging provider costs a run two timeouts
instead of one per document, and a document that alone times out costs a timeout or two without failing
the documents after it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, TypeAlias

from runiq.logging import get_logger
from runiq.rag._chunking.context import chunk_indexed_text
from runiq.rag._embeddings.batching import EmbeddingBatcher
from runiq.rag._errors import ProviderTimeoutError, ProviderUnavailableError
from runiq.rag._ingestion.preparing import Pending
from runiq.rag._ingestion.progress import ProgressTracker

if TYPE_CHECKING:
    from runiq.rag._embeddings.base import FloatMatrix

__all__ = ["GroupEmbedder", "Vectors", "empty_vectors"]

log = get_logger(__name__)

# Failures that say nothing about the document; this many in a row and the run stops calling the provider.
_PROVIDER_WIDE = (ProviderTimeoutError, ProviderUnavailableError)
_OUTAGE_CALLS = 2

Vectors: TypeAlias = "FloatMatrix | Exception | None"  # a document's vectors, its failure, or None (no embedder)


def empty_vectors(dims: int) -> FloatMatrix:
    import numpy as np  # loaded by then: the run opened its store and embedder

    return np.empty((0, dims), dtype=np.float32)


class GroupEmbedder:
    def __init__(self, embedder: EmbeddingBatcher | None, tracker: ProgressTracker, index_name: str) -> None:
        self._embedder = embedder
        self._tracker = tracker
        self._name = index_name
        self._outage_calls = 0
        self._outage: Exception | None = None  # set when the run stopped calling the provider

    async def embed(self, group: Sequence[Pending]) -> list[Vectors]:
        """Vectors (or a failure) for each document of the group, in order."""
        embedder = self._embedder
        texts = [chunk_indexed_text(chunk) for pending in group for chunk in pending.chunks]
        if embedder is None or not texts:
            return [None] * len(group)
        if self._outage is not None:
            return _each(group, embedder, self._outage)
        try:
            matrix = await self._call(embedder, texts)
        except Exception as exc:
            if len(group) == 1:
                return _each(group, embedder, exc)
            return await self._isolate(group, embedder)
        out: list[Vectors] = []
        offset = 0
        for pending in group:
            out.append(matrix[offset : offset + len(pending.chunks)])
            offset += len(pending.chunks)
        return out

    async def _isolate(self, group: Sequence[Pending], embedder: EmbeddingBatcher) -> list[Vectors]:
        """Embed each document on its own to find the failing ones, until the provider is declared down."""
        out: list[Vectors] = []
        for pending in group:
            if not pending.chunks:
                out.append(empty_vectors(embedder.client.dimensions))
            elif self._outage is not None:
                out.append(self._outage)
            else:
                out.append(await self._one(embedder, [chunk_indexed_text(chunk) for chunk in pending.chunks]))
        return out

    async def _one(self, embedder: EmbeddingBatcher, texts: list[str]) -> Vectors:
        try:
            return await self._call(embedder, texts)
        except Exception as exc:
            return exc

    async def _call(self, embedder: EmbeddingBatcher, texts: list[str]) -> FloatMatrix:
        """One provider call, counted. Two provider-wide failures in a row (a timeout, an unavailable
        provider) declare the provider down for the rest of the run; any other outcome resets the count."""
        calls = embedder.calls
        try:
            matrix = await embedder.embed(texts, on_batch=self._embedded)
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

    def _embedded(self, texts: int) -> None:
        self._tracker.add(embedded_chunks=texts)


def _each(group: Sequence[Pending], embedder: EmbeddingBatcher, failure: Exception) -> list[Vectors]:
    """The group's failure for every document that has chunks; a document without chunks needs no vectors."""
    return [failure if pending.chunks else empty_vectors(embedder.client.dimensions) for pending in group]
