"""The host's retrieval scope is enforced by PostgreSQL too: one tenant never sees another's chunks."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

import runiq_postgresql.plugin
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    MetadataValue,
    RagDocument,
    RagIngestionManager,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq_postgresql import PostgresVectorStorage


class _Tenant:
    def __init__(self) -> None:
        self.current = "a"

    def scope_for(self, query: RagQuery) -> Mapping[str, MetadataValue]:
        return {"tenant": self.current}


DOCUMENTS = [
    RagDocument(
        document_id="a-policy", content="Remote work policy POL-HR-014 for tenant A.", metadata={"tenant": "a"}
    ),
    RagDocument(
        document_id="b-policy", content="Remote work policy POL-HR-014 for tenant B.", metadata={"tenant": "b"}
    ),
    RagDocument(document_id="b-salary", content="Tenant B salary bands.", metadata={"tenant": "b", "kind": "hr"}),
]


@pytest.mark.parametrize("mode", list(RagRetrievalMode))
async def test_scope_isolates_tenants_in_postgresql(postgres_dsn: str, schema: str, mode: RagRetrievalMode) -> None:
    """Every mode filters by the mandatory scope in SQL; a contradicting query filter returns nothing."""
    tenant = _Tenant()
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.use_retrieval_scope(tenant).add_index(
            "tenants",
            lambda index: (
                index.use_documents(DOCUMENTS)
                .use_embedding(HashingEmbedding(dimensions=64))
                .use_vector_store(PostgresVectorStorage(dsn=postgres_dsn, schema=schema))
            ),
        ),
    )
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("tenants")
        retriever = host.services.get(RagRetriever)
        for name in ("a", "b"):
            tenant.current = name
            result = await retriever.retrieve(
                RagQuery(index_name="tenants", text="POL-HR-014 salary policy", mode=mode, top_k=10)
            )
            assert result.hits
            assert {hit.metadata["tenant"] for hit in result.hits} == {name}
        tenant.current = "b"
        widened = await retriever.retrieve(
            RagQuery(index_name="tenants", text="policy", mode=mode, filters={"tenant": "a"})
        )
        assert widened.hits == ()
