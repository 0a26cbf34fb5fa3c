"""The typed selection ``RayEmbedding(embedding=..., workers=...)``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from runiq.errors import call_translated, invalid_fields
from runiq.rag.providers import ProviderSelection

from runiq_ray.options import PROVIDER_NAME, RayEmbeddingOptions

__all__ = ["RayEmbedding"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RayEmbedding:
    """Run another embedding selection on Ray.

    ``index.use_embedding(RayEmbedding(embedding=SentenceTransformerEmbedding()))``

    Args:
        embedding: the selection each worker opens (any installed embedding provider).
        workers: actors in the pool; each holds one copy of the model.
        address: a running cluster (``"ray://head:10001"``, ``"auto"``); ``None`` uses the Ray already
            initialised in the process or starts a local one for the host's lifetime.
        cpus_per_worker / gpus_per_worker: Ray resources each actor reserves.
        local_cpus: CPUs of a local cluster the host starts (``None``: the machine's).
        plugin_modules: modules the workers register as plugins (for providers a host registers in code).
        start_timeout_seconds: how long the workers may take to be placed and open the inner provider
            before the host fails with ``ProviderUnavailableError`` (a cluster that cannot place them).
    """

    embedding: ProviderSelection
    workers: int = 2
    address: str | None = None
    cpus_per_worker: float = 1.0
    gpus_per_worker: float = 0.0
    local_cpus: int | None = None
    plugin_modules: tuple[str, ...] = field(default=())
    start_timeout_seconds: float = 300.0

    def __post_init__(self) -> None:
        self.options()  # validate now, so a bad selection fails where it is written

    @property
    def provider_name(self) -> str:
        return PROVIDER_NAME

    @property
    def display_name(self) -> str:
        # Safe display metadata: the inner model's display name, never the cluster address.
        return f"{self.embedding.display_name} on Ray ({self.workers} workers)"

    def provider_options(self) -> Mapping[str, object]:
        return {
            "embedding_provider": self.embedding.provider_name,
            "embedding_options": dict(self.embedding.provider_options()),
            "address": self.address,
            "workers": self.workers,
            "cpus_per_worker": self.cpus_per_worker,
            "gpus_per_worker": self.gpus_per_worker,
            "local_cpus": self.local_cpus,
            "plugin_modules": self.plugin_modules,
            "start_timeout_seconds": self.start_timeout_seconds,
        }

    def options(self) -> RayEmbeddingOptions:
        return call_translated(
            lambda: RayEmbeddingOptions.model_validate(self.provider_options()),
            invalid_fields("Invalid Ray embedding selection"),
        )
