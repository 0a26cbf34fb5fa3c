"""The PostgreSQL store passes the same contract suites as the in-memory store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager

import pytest

from runiq.rag._lexical import LexicalOptions
from runiq.rag.testing import LexicalAnalyzerContract, LexicalSearchContract, VectorStoreContract
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore


class TestPostgresStoreExact(VectorStoreContract):
    """Vector contract with exact scans (below the HNSW threshold)."""

    @pytest.fixture
    async def store(self, options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with PostgresVectorStore(options) as store:
            yield store


class TestPostgresStoreHnsw(VectorStoreContract):
    """Vector contract through the HNSW path (index built when the logical index is created)."""

    @pytest.fixture
    async def store(self, options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with PostgresVectorStore(options.model_copy(update={"ann_min_rows": 0})) as store:
            yield store


class TestPostgresLexical(LexicalSearchContract):
    @pytest.fixture
    async def store(self, options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with PostgresVectorStore(options) as store:
            yield store


class TestPostgresLexicalAnalyzers(LexicalAnalyzerContract):
    """The analyzer options (stemming, stop words) mean what they mean in memory."""

    @pytest.fixture
    def open_store(
        self, options: PostgresStoreOptions
    ) -> Callable[[LexicalOptions], AbstractAsyncContextManager[PostgresVectorStore]]:
        def opened(lexical: LexicalOptions) -> PostgresVectorStore:
            return PostgresVectorStore(options.model_copy(update=lexical.model_dump()))

        return opened
