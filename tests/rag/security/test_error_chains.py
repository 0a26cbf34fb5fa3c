"""Errors from retrieval keep no provider or store exception anywhere: not as ``__cause__``, not as
``__context__`` (which ``raise ... from None`` only hides), not in ``args`` or attributes.

Every fake here fails with the query, the chunk content or metadata in its exception, as real
backends do. The walk is :func:`runiq.rag.testing.chains.assert_content_free`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, SecretStr

from runiq.errors import ProviderUnavailableError, VectorStoreUnavailableError
from runiq.hosting import Host, HostBuilder
from runiq.rag import (
    HashingEmbedding,
    IndexBuilder,
    RagDocument,
    RagIngestionManager,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    RetrievalError,
    RetrievalErrorCode,
    add_runiq_rag,
)
from runiq.rag._embeddings.base import FloatMatrix
from runiq.rag.providers import EmbeddingInputKind, InMemoryVectorStore, LexicalQuery, StoreHit
from runiq.rag.testing import CANARY, FailingEmbedder
from runiq.rag.testing.chains import assert_content_free, reachable_exceptions
from runiq.rag.testing.fakes import UnavailableEmbedder

QUERY = f"remote work {CANARY}-QUERY"
METADATA = f"{CANARY}-METADATA"
SECRETS = (CANARY, METADATA)


class EchoingStore(InMemoryVectorStore):
    """Vector and lexical search fail with the request echoed, as a database error's DETAIL does."""

    async def search(self, index_name: str, vector: Any, **kwargs: Any) -> list[StoreHit]:
        raise RuntimeError(f"vector backend echoed filters {kwargs.get('filters')!r} for {index_name}")

    async def lexical_search(self, index_name: str, query: LexicalQuery, **kwargs: Any) -> list[StoreHit]:
        raise RuntimeError(f"lexical backend echoed: {query.text}")


class SloppyEmbedder(FailingEmbedder):
    """A plugin that translates its failure into a runiq error with ``from None`` inside ``except``:
    the runiq error looks clean but holds the provider's exception as ``__context__``."""

    async def embed(self, texts: Any, kind: EmbeddingInputKind) -> FloatMatrix:
        try:
            return await super().embed(texts, kind)
        except RuntimeError:
            raise ProviderUnavailableError("sloppy", "the provider failed") from None


def _configure(embedder: str | None = None, store: str | None = None) -> Callable[[Any], object]:
    documents = [
        RagDocument(document_id="hr/remote.md", content=f"Remote work policy. {CANARY}", metadata={"owner": METADATA})
    ]

    def configure(rag: Any) -> None:
        def index(builder: Any) -> None:
            builder.use_documents(documents)
            builder.use_embedding(embedder) if embedder else builder.use_embedding(HashingEmbedding(dimensions=32))
            builder.use_vector_store(store) if store else builder.use_in_memory_vector_store()

        rag.add_index("docs", index)

    return configure


async def _failed_retrieval(host: Host, mode: RagRetrievalMode, *, ingest: bool = True) -> RetrievalError:
    if ingest:
        await host.services.get(RagIngestionManager).run("docs")
    with pytest.raises(RetrievalError) as raised:
        await host.services.get(RagRetriever).retrieve(
            RagQuery(index_name="docs", text=QUERY, mode=mode, filters={"owner": METADATA})
        )
    return raised.value


@pytest.mark.parametrize("mode", [RagRetrievalMode.SEMANTIC, RagRetrievalMode.HYBRID])
async def test_an_echoing_embedder_leaves_nothing_chained(
    make_host: Callable[..., Host], mode: RagRetrievalMode
) -> None:
    """The hashing embedder failing with the query in its exception: a RetrievalError with an empty chain."""
    embedder = FailingEmbedder(32, fail_on="-QUERY")
    async with make_host(_configure(embedder="failing"), embeddings={"failing": embedder}) as host:
        error = await _failed_retrieval(host, mode)
    assert error.code is RetrievalErrorCode.EMBEDDING_FAILED
    assert error.cause_type == "RuntimeError"
    assert reachable_exceptions(error) == [error]
    assert_content_free(error, *SECRETS)


@pytest.mark.parametrize(
    ("mode", "code"),
    [
        (RagRetrievalMode.SEMANTIC, RetrievalErrorCode.VECTOR_STORE_QUERY_FAILED),
        (RagRetrievalMode.LEXICAL, RetrievalErrorCode.LEXICAL_QUERY_FAILED),
        (RagRetrievalMode.HYBRID, None),
    ],
)
async def test_an_echoing_store_leaves_nothing_chained(
    make_host: Callable[..., Host], mode: RagRetrievalMode, code: RetrievalErrorCode | None
) -> None:
    """Vector and lexical backends failing with the query and filter values: nothing of them is kept."""
    async with make_host(_configure(store="echo"), stores={"echo": EchoingStore()}) as host:
        error = await _failed_retrieval(host, mode)
    if code is not None:
        assert error.code is code
    assert reachable_exceptions(error) == [error]
    assert_content_free(error, *SECRETS)


async def test_a_runiq_error_with_a_foreign_context_is_not_chained(make_host: Callable[..., Host]) -> None:
    """A plugin's ProviderError raised ``from None`` inside ``except`` still holds the echo: it is not
    kept as the RetrievalError's cause; its class name is."""
    embedder = SloppyEmbedder(32, fail_on="-QUERY")
    async with make_host(_configure(embedder="sloppy"), embeddings={"sloppy": embedder}) as host:
        error = await _failed_retrieval(host, RagRetrievalMode.SEMANTIC)
    assert error.cause_type == "ProviderUnavailableError"
    assert error.__cause__ is None
    assert_content_free(error, *SECRETS)


async def test_a_clean_runiq_error_stays_the_cause(make_host: Callable[..., Host]) -> None:
    """A content-free provider error (nothing chained to it) is kept as ``__cause__`` for the caller."""
    async with make_host(_configure(embedder="down"), embeddings={"down": UnavailableEmbedder(32)}) as host:
        error = await _failed_retrieval(host, RagRetrievalMode.SEMANTIC, ingest=False)
    assert isinstance(error.__cause__, ProviderUnavailableError)
    assert error.__context__ is None
    assert_content_free(error, *SECRETS)


class DsnOptions(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    dsn: SecretStr


@asynccontextmanager
async def _unreachable(options: DsnOptions) -> AsyncIterator[object]:
    """A provider factory failing as a driver does: the DSN, password included, in its message."""
    raise ConnectionError(f"could not connect to {options.dsn.get_secret_value()}")
    yield  # pragma: no cover - never reached


@pytest.mark.parametrize("kind", ["vector store", "embedding"])
async def test_a_failing_provider_factory_leaves_nothing_chained(kind: str) -> None:
    """A factory that cannot open (its exception naming the DSN) gives the caller runiq's unavailable
    error with nothing of the factory's exception reachable, not even as ``__context__``."""
    dsn = f"postgresql://app:{CANARY}-PASSWORD@db.internal/rag"
    builder = HostBuilder(load_entry_points=False)
    if kind == "vector store":
        builder.providers.add_vector_store("broken", _unreachable, options=DsnOptions)
    else:
        builder.providers.add_embedding("broken", _unreachable, options=DsnOptions)

    def index(index_builder: IndexBuilder) -> None:
        index_builder.use_documents([RagDocument(document_id="a.md", content="text")])
        if kind == "vector store":
            index_builder.use_embedding(HashingEmbedding(dimensions=32)).use_vector_store("broken", dsn=dsn)
        else:
            index_builder.use_in_memory_vector_store().use_embedding("broken", dsn=dsn)

    add_runiq_rag(builder, lambda rag: rag.add_index("docs", index))
    expected = VectorStoreUnavailableError if kind == "vector store" else ProviderUnavailableError
    async with builder.build() as host:
        with pytest.raises(expected) as raised:
            await host.services.get(RagRetriever).retrieve(RagQuery(index_name="docs", text=QUERY))
    assert raised.value.__context__ is None
    assert_content_free(raised.value, CANARY)
