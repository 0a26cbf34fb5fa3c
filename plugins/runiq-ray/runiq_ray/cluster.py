"""Connecting to Ray, or starting a local cluster that lives as long as the host."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from runiq.errors import translated

from runiq_ray.failures import cluster_unavailable
from runiq_ray.options import RayEmbeddingOptions

__all__ = ["ray_session"]


@asynccontextmanager
async def ray_session(options: RayEmbeddingOptions) -> AsyncIterator[None]:
    """Use the Ray already initialised in this process, or connect/start one and shut it down at exit.

    ``ray.init`` blocks for seconds (it may start a local raylet), so it runs in a worker thread.
    """
    import ray

    if ray.is_initialized():
        yield
        return
    await translated(lambda: asyncio.to_thread(_init, options), cluster_unavailable)
    try:
        yield
    finally:
        await asyncio.to_thread(ray.shutdown)


def _init(options: RayEmbeddingOptions) -> None:
    import ray

    ray.init(
        address=options.address,
        num_cpus=options.local_cpus if options.address is None else None,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
