"""Per-index runtime resources, opened on first use and closed when the host stops.

Registration only recorded provider references; here the provider factories (async context
managers) are entered. Indexes whose references are equal share one live provider, so two indexes on
the same PostgreSQL DSN share one pool. Opening lazily keeps host start-up free of I/O for indexes
nobody uses, and lets a host start while a database is down (the failure surfaces on first use).
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from runiq.errors import translated
from runiq.logging import get_logger
from runiq.plugins.registry import ProviderKind, ProviderRegistry
from runiq.rag._chunking.context import INDEXED_TEXT_VERSION
from runiq.rag._embeddings.base import EmbeddingClient
from runiq.rag._embeddings.batching import EmbeddingBatcher
from runiq.rag._errors import (
    ProviderResponseError,
    ProviderUnavailableError,
    RagError,
    VectorStoreUnavailableError,
)
from runiq.rag._registration.definitions import IndexDefinition, IndexRegistry, ProviderReference
from runiq.rag._stores.base import IndexSpec, VectorStore

__all__ = ["IndexResources", "IndexRuntime"]

log = get_logger(__name__)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexResources:
    definition: IndexDefinition
    store: VectorStore
    embedder: EmbeddingBatcher | None
    spec: IndexSpec
    reranker: Any | None = None

    @property
    def configuration_fingerprint(self) -> str:
        """What, besides content, decides a document's chunks and vectors."""
        spec = self.spec
        return (
            f"{self.definition.chunking.fingerprint};{INDEXED_TEXT_VERSION};model={spec.embedding_model};"
            f"dims={spec.dimensions};metric={spec.metric.value}"
        )


class IndexRuntime:
    def __init__(self, registry: IndexRegistry, providers: ProviderRegistry) -> None:
        self._registry = registry
        self._providers = providers
        self._stack = AsyncExitStack()
        self._instances: dict[str, Any] = {}
        self._resources: dict[str, IndexResources] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    @property
    def registry(self) -> IndexRegistry:
        return self._registry

    @property
    def providers(self) -> ProviderRegistry:
        return self._providers

    def opened(self, index_name: str) -> IndexResources | None:
        """The index's resources if something already opened them; never opens (no I/O)."""
        return self._resources.get(index_name)

    async def get(self, index_name: str) -> IndexResources:
        definition = self._registry.get(index_name)
        cached = self._resources.get(index_name)
        if cached is not None:
            return cached
        async with self._lock:
            if self._closed:
                raise RuntimeError("The RAG runtime is closed; the host has stopped.")
            cached = self._resources.get(index_name)
            if cached is None:
                cached = await self._open(definition)
                self._resources[index_name] = cached
            return cached

    async def _open(self, definition: IndexDefinition) -> IndexResources:
        store: VectorStore = await self._instance(definition.vector_store)
        batcher = None
        if definition.embedding is not None:
            client: EmbeddingClient = await self._instance(definition.embedding)
            if client.dimensions <= 0:
                raise ProviderResponseError(definition.embedding.name, "the provider reported no dimension")
            batcher = EmbeddingBatcher(
                client,
                provider=definition.embedding.name,
                batch_size=definition.embedding_batch_size,
                concurrency=definition.embedding_concurrency,
                timeout_seconds=definition.embedding_timeout_seconds,
            )
        reranker = await self._instance(definition.reranker) if definition.reranker is not None else None
        spec = IndexSpec(
            name=definition.name,
            dimensions=batcher.client.dimensions if batcher else None,
            metric=definition.metric,
            embedding_model=batcher.client.model_name if batcher else None,
        )
        return IndexResources(definition=definition, store=store, embedder=batcher, spec=spec, reranker=reranker)

    async def _instance(self, reference: ProviderReference) -> Any:
        key = reference.instance_key
        if key not in self._instances:
            spec = self._providers.get(reference.kind, reference.name)
            self._instances[key] = await translated(
                lambda: self._stack.enter_async_context(spec.factory(reference.options)),
                lambda exc: _open_failed(reference, exc),
            )
        return self._instances[key]

    async def aclose(self) -> None:
        async with self._lock:
            self._closed = True
            self._resources.clear()
            self._instances.clear()
            await self._stack.aclose()


def _open_failed(reference: ProviderReference, exc: Exception) -> Exception:
    """A factory's own text may carry a DSN or key: log only its type, and raise a fixed error
    outside ``except`` (:func:`~runiq.errors.translated`) so the factory's exception is not kept."""
    if isinstance(exc, RagError):
        return exc
    log.warning(
        "runtime.provider_open_failed", kind=reference.kind.value, provider=reference.name, error=type(exc).__name__
    )
    if reference.kind is ProviderKind.VECTOR_STORE:
        return VectorStoreUnavailableError(reference.name)
    return ProviderUnavailableError(reference.name, "the provider could not be opened")
