"""``add_runiq_rag(builder, configure)``: registers RAG services and lifecycle participants on a host.

:func:`declare_runiq_rag` is its first half: the indexes a configuration declares, validated, without
the services. The retrieval, ingestion and context modules load when the services are registered, so
``runiq status`` (which reads declarations only) does not import them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from runiq.hosting.builder import HostBuilder
from runiq.hosting.services import ServiceProvider
from runiq.rag._registration.builder import RagBuilder
from runiq.rag._registration.config import add_indexes_from_settings

if TYPE_CHECKING:
    from runiq.rag._ingestion.lifecycle import IngestionStrategiesParticipant

__all__ = ["add_runiq_rag", "declare_runiq_rag"]


class _RagServices:
    """Marks a builder whose RAG services are registered (``add_runiq_rag`` registers them once)."""


def add_runiq_rag(builder: HostBuilder, configure: Callable[[RagBuilder], object] | None = None) -> RagBuilder:
    """Register RAG on a host. Repeated calls accumulate indexes on the same :class:`RagBuilder`.

    Indexes declared in the builder's settings (``runiq.toml`` / ``RUNIQ_RAG__INDEXES__...``) are
    registered on the first call, through the same builder API as code registrations.
    """
    rag = declare_runiq_rag(builder)
    builder.get_or_add_extension(_RagServices, lambda: _register_services(builder, rag))
    if configure is not None:
        configure(rag)
    return rag


def declare_runiq_rag(builder: HostBuilder) -> RagBuilder:
    """The builder's :class:`RagBuilder`, holding the indexes its settings declare (validated against its
    providers and loaders, frozen at ``build()``), without RAG's services: what reading a configuration
    needs (``runiq status``). ``add_runiq_rag`` on the same builder adds the services to the same indexes.
    """
    return builder.get_or_add_extension(RagBuilder, lambda: _declare(builder))


def _declare(builder: HostBuilder) -> RagBuilder:
    rag = RagBuilder(builder.providers, builder.loaders)
    builder.add_build_step(rag.freeze)
    add_indexes_from_settings(rag, builder.settings)
    return rag


def _register_services(builder: HostBuilder, rag: RagBuilder) -> _RagServices:
    from runiq.rag._context import RagContextAssembler
    from runiq.rag._ingestion.manager import RagIngestionManager
    from runiq.rag._observability.events import ObservabilityRecorder
    from runiq.rag._observability.projection import ObservabilityProjector
    from runiq.rag._registration.definitions import IndexRegistry
    from runiq.rag._reranking import index_reranker_resolver
    from runiq.rag._retrieval.retriever import RagRetriever, RetrievalOptions
    from runiq.rag._runtime import IndexRuntime

    services = builder.services
    services.try_add_singleton(IndexRegistry, lambda _: IndexRegistry(rag.definitions))
    # Closed when the host stops (started or not), after the manager that uses them: providers and pools.
    services.try_add_singleton(
        IndexRuntime, lambda sp: IndexRuntime(sp.get(IndexRegistry), builder.providers), close=IndexRuntime.aclose
    )
    services.try_add_singleton(RetrievalOptions, lambda _: RetrievalOptions())
    services.try_add_singleton(ObservabilityRecorder, lambda _: ObservabilityRecorder())
    services.try_add_singleton(
        ObservabilityProjector, lambda _: ObservabilityProjector(rag.observability, rag.redactor)
    )
    services.try_add_singleton(
        RagRetriever,
        lambda sp: RagRetriever(
            sp.get(IndexRuntime),
            sp.get(RetrievalOptions),
            projector=sp.get(ObservabilityProjector),
            sinks=[sp.get(ObservabilityRecorder), *rag.sinks],
            scope=rag.scope,
        ),
    )
    services.try_add_singleton(
        RagIngestionManager,
        lambda sp: RagIngestionManager(sp.get(IndexRuntime), sinks=[sp.get(ObservabilityRecorder), *rag.sinks]),
        close=RagIngestionManager.aclose,  # cancels and awaits active runs
    )
    services.try_add_singleton(
        RagContextAssembler,
        lambda sp: RagContextAssembler(
            sp.get(RagRetriever), reranker_resolver=index_reranker_resolver(sp.get(IndexRuntime))
        ),
    )
    builder.add_lifecycle_participant(_strategies_participant)
    return _RagServices()


def _strategies_participant(services: ServiceProvider) -> IngestionStrategiesParticipant:
    from runiq.rag._ingestion.lifecycle import IngestionStrategiesParticipant
    from runiq.rag._ingestion.manager import RagIngestionManager
    from runiq.rag._runtime import IndexRuntime

    return IngestionStrategiesParticipant(services.get(RagIngestionManager), services.get(IndexRuntime))
