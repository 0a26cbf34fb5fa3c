"""The in-memory store and the hashing embedder pass the same contracts plugins must pass."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from runiq.rag import HashingEmbedder, InMemoryVectorStore
from runiq.rag.testing import (
    EmbeddingClientContract,
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


class TestInMemoryFilters(MetadataFilterContract):
    @pytest.fixture
    async def store(self) -> AsyncIterator[InMemoryVectorStore]:
        yield InMemoryVectorStore()


class TestHashingEmbedder(EmbeddingClientContract):
    @pytest.fixture
    async def client(self) -> AsyncIterator[HashingEmbedder]:
        yield HashingEmbedder(128)
