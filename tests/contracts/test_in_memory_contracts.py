"""The in-memory store and the hashing embedder pass the same contracts plugins must pass."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, nullcontext

import pytest

from runiq.rag._lexical import LexicalOptions
from runiq.rag.providers import HashingEmbedder, InMemoryVectorStore, VectorStore
from runiq.rag.testing import (
    EmbeddingClientContract,
    LexicalAnalyzerContract,
    LexicalSearchContract,
    MetadataFilterContract,
    VectorStoreContract,
)


class TestInMemoryStore(VectorStoreContract):
    @pytest.fixture
    async def store(self) -> AsyncIterator[InMemoryVectorStore]:
        yield InMemoryVectorStore()


class TestInMemoryLexical(LexicalSearchContract):
    @pytest.fixture
    async def store(self) -> AsyncIterator[InMemoryVectorStore]:
        yield InMemoryVectorStore()


class TestInMemoryLexicalAnalyzers(LexicalAnalyzerContract):
    @pytest.fixture
    def open_store(self) -> Callable[[LexicalOptions], AbstractAsyncContextManager[VectorStore]]:
        return lambda options: nullcontext(InMemoryVectorStore(options.analyzer()))


class TestInMemoryFilters(MetadataFilterContract):
    @pytest.fixture
    async def store(self) -> AsyncIterator[InMemoryVectorStore]:
        yield InMemoryVectorStore()


class TestHashingEmbedder(EmbeddingClientContract):
    @pytest.fixture
    async def client(self) -> AsyncIterator[HashingEmbedder]:
        yield HashingEmbedder(128)
