"""The ``runiq`` entry point: registers the ``ray`` embedding provider.

Importing this module is cheap: Ray, numpy and the driver side are imported only when the provider opens.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from runiq.rag.providers import ProviderRegistry, hookimpl

from runiq_ray.options import PROVIDER_NAME, RayEmbeddingOptions

if TYPE_CHECKING:
    from runiq_ray.embedder import RayEmbedder

__all__ = ["runiq_register_providers"]


@asynccontextmanager
async def _open_ray_embedder(options: RayEmbeddingOptions) -> AsyncIterator[RayEmbedder]:
    """:func:`runiq_ray.open_ray_embedder`, its module imported off the event loop."""
    await asyncio.to_thread(importlib.import_module, "runiq_ray.embedder")
    from runiq_ray.embedder import open_ray_embedder

    async with open_ray_embedder(options) as embedder:
        yield embedder


@hookimpl
def runiq_register_providers(registry: ProviderRegistry) -> None:
    registry.add_embedding(PROVIDER_NAME, _open_ray_embedder, options=RayEmbeddingOptions)
