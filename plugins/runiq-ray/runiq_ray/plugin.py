"""The ``runiq`` entry point: registers the ``ray`` embedding provider.

Importing this module is cheap: Ray is imported only when the provider opens.
"""

from __future__ import annotations

from runiq.rag.providers import ProviderRegistry, hookimpl

from runiq_ray.embedder import open_ray_embedder
from runiq_ray.options import PROVIDER_NAME, RayEmbeddingOptions

__all__ = ["runiq_register_providers"]


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding(PROVIDER_NAME, open_ray_embedder, options=RayEmbeddingOptions)
