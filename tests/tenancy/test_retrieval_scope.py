"""A host-supplied retrieval scope is a mandatory filter that query filters cannot widen."""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar

import pytest

from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    MetadataValue,
    RagConfigurationError,
    RagDocument,
    RagIngestionManager,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._retrieval.scope import ScopeConflict, StaticRetrievalScope, merge_scope

CURRENT_TENANT: ContextVar[str] = ContextVar("tenant")


class TenantScope:
    def scope_for(self, query: RagQuery) -> Mapping[str, MetadataValue]:
        return {"tenant": CURRENT_TENANT.get()}


DOCUMENTS = [
    RagDocument(
        document_id="a-policy", content="Remote work policy POL-HR-014 for tenant A.", metadata={"tenant": "a"}
    ),
    RagDocument(
        document_id="b-policy", content="Remote work policy POL-HR-014 for tenant B.", metadata={"tenant": "b"}
    ),
    RagDocument(document_id="b-secret", content="Tenant B salary bands.", metadata={"tenant": "b", "kind": "hr"}),
]


def _builder() -> HostBuilder:
    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(
        builder,
        lambda rag: rag.use_retrieval_scope(TenantScope()).add_index(
            "docs",
            lambda index: (
                index.use_documents(DOCUMENTS)
                .use_embedding(HashingEmbedding(dimensions=64))
                .use_in_memory_vector_store()
            ),
        ),
    )
    return builder


@pytest.mark.parametrize("mode", list(RagRetrievalMode))
async def test_a_tenant_never_sees_another_tenants_chunks(mode: RagRetrievalMode) -> None:
    """Every mode applies the scope before the store ranks anything."""
    async with _builder().build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        retriever = host.services.get(RagRetriever)
        for tenant in ("a", "b"):
            token = CURRENT_TENANT.set(tenant)
            try:
                result = await retriever.retrieve(
                    RagQuery(index_name="docs", text="POL-HR-014 salary", mode=mode, top_k=10)
                )
            finally:
                CURRENT_TENANT.reset(token)
            assert result.hits
            assert {hit.metadata["tenant"] for hit in result.hits} == {tenant}


async def test_query_filters_narrow_but_cannot_widen_the_scope() -> None:
    """A compatible filter narrows; a contradicting filter returns nothing rather than other tenants' data."""
    async with _builder().build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        retriever = host.services.get(RagRetriever)
        token = CURRENT_TENANT.set("b")
        try:
            narrowed = await retriever.retrieve(
                RagQuery(index_name="docs", text="salary policy", mode=RagRetrievalMode.LEXICAL, filters={"kind": "hr"})
            )
            widened = await retriever.retrieve(
                RagQuery(index_name="docs", text="policy", mode=RagRetrievalMode.HYBRID, filters={"tenant": "a"})
            )
        finally:
            CURRENT_TENANT.reset(token)
    assert [hit.document_id for hit in narrowed.hits] == ["b-secret"]
    assert widened.hits == ()


def test_only_one_scope_and_it_must_be_a_provider() -> None:
    """Registration rejects a second scope or an object that is not a scope provider."""
    builder = HostBuilder(load_entry_points=False)
    rag = add_runiq_rag(builder)
    rag.use_retrieval_scope(StaticRetrievalScope({"tenant": "a"}))
    with pytest.raises(RagConfigurationError):
        rag.use_retrieval_scope(StaticRetrievalScope({"tenant": "b"}))
    with pytest.raises(RagConfigurationError):
        add_runiq_rag(HostBuilder(load_entry_points=False)).use_retrieval_scope(object())  # type: ignore[arg-type]


def test_scope_conflicts_use_the_stores_filter_equality() -> None:
    """3.0 inside scope 3 is the same filter (the stores match them alike); 1 inside True contradicts it."""
    assert dict(merge_scope({"tenant": 3.0, "kind": "hr"}, {"tenant": 3}) or {}) == {"tenant": 3.0, "kind": "hr"}
    with pytest.raises(ScopeConflict):
        merge_scope({"tenant": 1}, {"tenant": True})
    with pytest.raises(ScopeConflict):
        merge_scope({"tenant": "3"}, {"tenant": 3})


@pytest.mark.parametrize("mode", list(RagRetrievalMode))
async def test_no_or_or_not_in_the_query_widens_the_scope(mode: RagRetrievalMode) -> None:
    """The scope is its own conjunct: an $or naming the other tenant, a tautology or a $not of the
    scope itself finds only the caller's tenant's chunks (or none)."""
    widening = [
        {"$or": [{"tenant": "a"}, {"kind": {"$exists": False}}]},
        {"$or": [{"kind": "hr"}, {"$not": {"kind": "hr"}}]},
        {"tenant": {"$in": ["a", "b"]}},
        {"$not": {"tenant": "b"}},
        {"tenant": {"$ne": "b"}},
    ]
    async with _builder().build() as host:
        await host.services.get(RagIngestionManager).run("docs")
        retriever = host.services.get(RagRetriever)
        token = CURRENT_TENANT.set("b")
        try:
            results = [
                await retriever.retrieve(
                    RagQuery(index_name="docs", text="POL-HR-014 salary policy", mode=mode, top_k=10, filters=spec)
                )
                for spec in widening
            ]
        finally:
            CURRENT_TENANT.reset(token)
    found = [sorted(hit.document_id for hit in result.hits) for result in results]
    assert found[0] == ["b-policy"]
    assert found[1] == ["b-policy", "b-secret"]
    assert found[2] == ["b-policy", "b-secret"]
    assert found[3] == [] and found[4] == []


def test_merge_scope_keeps_the_scope_a_separate_conjunct() -> None:
    """Disjoint keys merge into one mapping; shared keys with operators become $and of scope and query."""
    assert merge_scope({"kind": "hr"}, {"tenant": "a"}) == {"tenant": "a", "kind": "hr"}
    either = {"$or": [{"tenant": "b"}, {"kind": "hr"}]}
    assert merge_scope(either, {"tenant": "a"}) == {"tenant": "a", "$or": ({"tenant": "b"}, {"kind": "hr"})}
    merged = merge_scope({"tenant": {"$ne": "a"}}, {"tenant": "a"})
    assert merged == {"$and": ({"tenant": "a"}, {"tenant": {"$ne": "a"}})}
    assert merge_scope(None, {"tenant": "a"}) == {"tenant": "a"}
    assert merge_scope({"kind": "hr"}, {}) == {"kind": "hr"}
    assert merge_scope(None, {}) is None
    region = merge_scope({"region": "eu"}, {"region": {"$in": ["eu", "uk"]}})
    assert region == {"$and": ({"region": {"$in": ("eu", "uk")}}, {"region": "eu"})}
