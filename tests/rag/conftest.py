"""Shared building blocks for the RAG tests: hosts with injected providers and controllable fakes.

Test modules run under ``--import-mode=importlib``, so helpers are handed out as fixtures rather than
imported from this file.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
import pytest

from runiq.hosting import Host, HostBuilder
from runiq.rag import IndexBuilder, RagBuilder, RagDocument, add_runiq_rag
from runiq.rag._embeddings.base import FloatMatrix
from runiq.rag.providers import (
    EmbeddingInputKind,
    HashingEmbedder,
    InMemoryVectorStore,
    SourceFailure,
    SourceItem,
    hookimpl,
)


def _yielding(instance: object) -> Callable[[Any], Any]:
    @asynccontextmanager
    async def factory(options: Any) -> AsyncIterator[object]:
        yield instance

    return factory


class ProviderPlugin:
    """A plugin that registers ready-made objects as named providers (one shared instance per name)."""

    def __init__(self, embeddings: dict[str, object] | None = None, stores: dict[str, object] | None = None) -> None:
        self.embeddings = embeddings or {}
        self.stores = stores or {}

    @hookimpl
    def runiq_register_providers(self, registry: Any) -> None:
        for name, client in self.embeddings.items():
            registry.add_embedding(name, _yielding(client))
        for name, store in self.stores.items():
            registry.add_vector_store(name, _yielding(store))


class MutableSource:
    """A document source whose documents and failures a test changes between runs."""

    source_kind = "test"

    def __init__(self, documents: Iterable[RagDocument] = (), identity: str = "test-source") -> None:
        self.documents: list[RagDocument] = list(documents)
        self.failures: list[SourceFailure] = []
        self.reads = 0
        self._identity = identity

    @property
    def identity(self) -> str:
        return self._identity

    def set(self, **contents: str) -> None:
        """Replace the documents: ``set(a="text", b="text")`` gives ids ``a`` and ``b``."""
        self.documents = [RagDocument(document_id=doc_id, content=text) for doc_id, text in contents.items()]

    async def stream(self) -> AsyncIterator[SourceItem]:
        self.reads += 1
        for failure in list(self.failures):
            yield failure
        for document in list(self.documents):
            yield document


class GatedEmbedder(HashingEmbedder):
    """A hashing embedder that parks every call whose batch contains ``gate_on`` (all calls when None)
    until ``release`` is set; ``reached`` is set when the first call parks."""

    def __init__(self, dimensions: int = 32, gate_on: str | None = None) -> None:
        super().__init__(dimensions)
        self.gate_on = gate_on
        self.reached = asyncio.Event()
        self.release = asyncio.Event()
        self.calls = 0
        self.texts: list[str] = []

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        self.calls += 1
        self.texts.extend(texts)
        if self.gate_on is None or any(self.gate_on in text for text in texts):
            self.reached.set()
            await self.release.wait()
        return self.embed_sync(texts)


class CountingEmbedder(HashingEmbedder):
    """A hashing embedder that records every batch it receives."""

    def __init__(self, dimensions: int = 32) -> None:
        super().__init__(dimensions)
        self.batches: list[list[str]] = []

    @property
    def texts(self) -> list[str]:
        return [text for batch in self.batches for text in batch]

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        self.batches.append(list(texts))
        return self.embed_sync(texts)


HostFactory = Callable[..., Host]


@pytest.fixture
def make_host() -> HostFactory:
    """``make_host(lambda rag: ..., embeddings={...}, stores={...})`` -> an unstarted host."""

    def make(
        configure: Callable[[RagBuilder], object],
        *,
        embeddings: dict[str, object] | None = None,
        stores: dict[str, object] | None = None,
    ) -> Host:
        builder = HostBuilder(load_entry_points=False, plugins=[ProviderPlugin(embeddings, stores)])
        add_runiq_rag(builder, configure)
        return builder.build()

    return make


@pytest.fixture
def index_host(make_host: HostFactory) -> Callable[..., Host]:
    """``index_host(lambda index: ..., name="docs", ...)`` -> an unstarted host with one index."""

    def make(configure_index: Callable[[IndexBuilder], object], *, name: str = "docs", **providers: Any) -> Host:
        return make_host(lambda rag: rag.add_index(name, configure_index), **providers)

    return make


@pytest.fixture
def source() -> MutableSource:
    return MutableSource()


@pytest.fixture
def source_type() -> type[MutableSource]:
    """The MutableSource class, for tests that need several sources."""
    return MutableSource


@pytest.fixture
def gated_embedder_type() -> type[GatedEmbedder]:
    return GatedEmbedder


@pytest.fixture
def counting_embedder() -> CountingEmbedder:
    return CountingEmbedder()


@pytest.fixture
def memory_store() -> InMemoryVectorStore:
    return InMemoryVectorStore()


def _all_chunks(store: InMemoryVectorStore, index_name: str, dims: int) -> Any:
    """Every stored chunk as ``{document_id: {chunk_id: content}}`` (searches with top_k = everything)."""

    async def collect() -> dict[str, dict[str, str]]:
        total = await store.count(index_name)
        if total == 0:
            return {}
        hits = await store.search(index_name, np.ones(dims, dtype=np.float32), top_k=total)
        out: dict[str, dict[str, str]] = {}
        for hit in hits:
            out.setdefault(hit.document_id, {})[hit.chunk_id] = hit.content
        return out

    return collect()


@pytest.fixture
def stored_chunks() -> Callable[..., Any]:
    """``await stored_chunks(store, index, dims)`` -> ``{document_id: {chunk_id: content}}``."""
    return _all_chunks
