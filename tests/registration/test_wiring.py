"""add_runiq_rag: one RagBuilder per host builder, services and participants, frozen after build."""

from __future__ import annotations

import pytest

from runiq.hosting import HostBuilder, HostState
from runiq.rag import (
    HashingEmbedding,
    IndexNotFoundError,
    IndexRegistry,
    RagBuilder,
    RagConfigurationError,
    RagIngestionManager,
    RagRetriever,
    RetrievalOptions,
    add_runiq_rag,
)


def _lexical(index: object) -> None:
    index.use_directory("docs").use_in_memory_vector_store().use_default_mode("lexical")  # type: ignore[attr-defined]


def test_repeated_calls_return_one_builder_and_accumulate(builder: HostBuilder) -> None:
    """add_runiq_rag returns the same RagBuilder every time; indexes from each call accumulate."""
    first = add_runiq_rag(builder, lambda rag: rag.add_index("a", _lexical))
    second = add_runiq_rag(builder, lambda rag: rag.add_index("b", _lexical))
    assert isinstance(first, RagBuilder)
    assert first is second
    assert [d.name for d in second.definitions] == ["a", "b"]


def test_duplicate_names_across_calls_are_rejected(builder: HostBuilder) -> None:
    """The same index name in two add_runiq_rag calls is a duplicate."""
    add_runiq_rag(builder, lambda rag: rag.add_index("a", _lexical))
    with pytest.raises(RagConfigurationError, match="already registered"):
        add_runiq_rag(builder, lambda rag: rag.add_index("a", _lexical))


def test_indexes_cannot_be_added_after_build(builder: HostBuilder) -> None:
    """Once the host is built the registration is frozen; late add_index calls fail."""
    rag = add_runiq_rag(builder, lambda rag: rag.add_index("a", _lexical))
    builder.build()
    with pytest.raises(RagConfigurationError, match="after the host is built"):
        rag.add_index("b", _lexical)
    assert [d.name for d in rag.definitions] == ["a"]


async def test_registry_service_lists_definitions_in_registration_order(builder: HostBuilder) -> None:
    """The IndexRegistry service holds exactly the registered definitions, in order, by name."""
    rag = add_runiq_rag(builder)
    rag.add_index("zeta", _lexical)
    rag.add_index(
        "alpha", lambda i: i.use_directory("d").use_in_memory_vector_store().use_embedding(HashingEmbedding())
    )
    async with builder.build() as host:
        registry = host.services.get(IndexRegistry)
        assert registry.names == ("zeta", "alpha")
        assert tuple(registry) == rag.definitions
        assert len(registry) == 2
        assert "zeta" in registry
        assert registry.get("alpha") is rag.definitions[1]
        with pytest.raises(IndexNotFoundError):
            registry.get("missing")


async def test_no_indexes_gives_an_empty_registry_and_a_working_host(builder: HostBuilder) -> None:
    """add_runiq_rag without indexes still registers its services; the registry is empty."""
    add_runiq_rag(builder)
    async with builder.build() as host:
        assert host.state is HostState.RUNNING
        assert len(host.services.get(IndexRegistry)) == 0
        assert isinstance(host.services.get(RagRetriever), RagRetriever)


async def test_retriever_resolves_without_any_embedding_provider(builder: HostBuilder) -> None:
    """A host whose only index is lexical resolves the retriever and manager (no embedding client needed)."""
    add_runiq_rag(builder, lambda rag: rag.add_index("a", _lexical))
    async with builder.build() as host:
        assert isinstance(host.services.get(RagRetriever), RagRetriever)
        assert isinstance(host.services.get(RagIngestionManager), RagIngestionManager)


def test_without_add_runiq_rag_there_are_no_rag_services(builder: HostBuilder) -> None:
    """RAG services exist only after add_runiq_rag: an unknown type is a LookupError."""
    host = builder.build()
    with pytest.raises(LookupError):
        host.services.get(RagRetriever)


def test_application_services_registered_before_add_runiq_rag_are_kept(builder: HostBuilder) -> None:
    """TryAdd semantics (reference §4.5): add_runiq_rag does not overwrite a service the application registered."""
    mine = RetrievalOptions(hybrid_candidate_multiplier=8)
    builder.services.add_instance(RetrievalOptions, mine)
    add_runiq_rag(builder)
    assert builder.build().services.get(RetrievalOptions) is mine


def test_application_services_registered_after_add_runiq_rag_replace_the_default(builder: HostBuilder) -> None:
    """A registration made after add_runiq_rag replaces runiq's default for that type."""
    add_runiq_rag(builder)
    mine = RetrievalOptions(hybrid_candidate_multiplier=8)
    builder.services.add_instance(RetrievalOptions, mine)
    assert builder.build().services.get(RetrievalOptions) is mine
