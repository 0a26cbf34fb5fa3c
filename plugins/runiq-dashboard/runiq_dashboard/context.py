"""What the dashboard's routes share: the host's RAG services and the dashboard's own state."""

from __future__ import annotations

from dataclasses import dataclass, field

from runiq.hosting import Host
from runiq.rag import IndexRegistry, IndexRuntime, RagIngestionManager, RagRetriever
from runiq_dashboard.access import AccessPolicy
from runiq_dashboard.options import DashboardOptions
from runiq_dashboard.progress_clock import ProgressClock
from runiq_dashboard.ratelimit import TokenBucket

__all__ = ["RagServices", "rag_services"]


@dataclass(frozen=True, slots=True)
class RagServices:
    registry: IndexRegistry
    manager: RagIngestionManager
    runtime: IndexRuntime
    retriever: RagRetriever
    options: DashboardOptions
    policy: AccessPolicy
    query_bucket: TokenBucket
    clock: ProgressClock = field(default_factory=ProgressClock)

    @classmethod
    def create(cls, host: Host, options: DashboardOptions, policy: AccessPolicy) -> RagServices:
        services = host.services
        return cls(
            registry=services.get(IndexRegistry),
            manager=services.get(RagIngestionManager),
            runtime=services.get(IndexRuntime),
            retriever=services.get(RagRetriever),
            options=options,
            policy=policy,
            query_bucket=TokenBucket(options.query_rate_limit),
        )


def rag_services(host: Host, options: DashboardOptions, policy: AccessPolicy) -> RagServices | None:
    """The RAG services when RAG is registered on ``host``, else None (the RAG endpoints then do not exist)."""
    wanted = (IndexRegistry, RagIngestionManager, IndexRuntime, RagRetriever)
    if not all(service in host.services for service in wanted):
        return None
    return RagServices.create(host, options, policy)
