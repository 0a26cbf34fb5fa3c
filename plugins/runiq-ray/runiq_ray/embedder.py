"""The driver side: an :class:`~runiq.rag.EmbeddingClient` whose batches run on a pool of Ray actors."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import numpy as np
from runiq.errors import ProviderResponseError, ProviderUnavailableError, translated
from runiq.rag.providers import EmbeddingInputKind

from runiq_ray.cluster import ray_session
from runiq_ray.failures import worker_failed
from runiq_ray.options import PROVIDER_NAME, RayEmbeddingOptions
from runiq_ray.worker import EmbeddingWorker

__all__ = ["RayEmbedder", "open_ray_embedder"]


class RayEmbedder:
    """Sends each batch to the least busy actor; the pipeline's embedding concurrency keeps them all fed.

    An actor Ray reports dead (``ActorDiedError``: lost again after its one restart) gets no more
    batches: Ray answers a call to a dead actor at once, so it would otherwise look the least busy.

    The model identity is the inner provider's: vectors made on Ray equal the ones made in process,
    so turning Ray on or off does not re-embed an index.
    """

    def __init__(self, actors: Sequence[Any], *, model_name: str, dimensions: int) -> None:
        self._actors = list(actors)
        self._busy = [0] * len(self._actors)
        self._lost: set[int] = set()
        self._model_name = model_name
        self._dimensions = dimensions

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def workers(self) -> int:
        return len(self._actors)

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> np.ndarray[Any, np.dtype[np.float32]]:
        if not texts:
            return np.empty((0, self._dimensions), dtype=np.float32)
        slot = self._least_busy()
        self._busy[slot] += 1
        try:
            vectors = await translated(
                lambda: _call(self._actors[slot].embed, list(texts), kind.value), lambda exc: self._failed(slot, exc)
            )
        finally:
            self._busy[slot] -= 1
        if not isinstance(vectors, np.ndarray) or vectors.shape != (len(texts), self._dimensions):
            raise ProviderResponseError(PROVIDER_NAME, "a Ray worker returned vectors of the wrong shape")
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _least_busy(self) -> int:
        live = [slot for slot in range(len(self._actors)) if slot not in self._lost]
        if not live:
            raise ProviderUnavailableError(PROVIDER_NAME, "every Ray worker of the pool was lost")
        return min(live, key=self._busy.__getitem__)

    def _failed(self, slot: int, exc: Exception) -> Exception:
        from ray.exceptions import ActorDiedError

        if isinstance(exc, ActorDiedError):
            self._lost.add(slot)
        return worker_failed(exc)


async def _call(method: Any, *args: Any) -> Any:
    """Await one actor task; a caller that gives up (a timeout) cancels the task too."""
    import ray

    reference = method.remote(*args)
    try:
        return await reference
    except asyncio.CancelledError:
        ray.cancel(reference)
        raise


@asynccontextmanager
async def open_ray_embedder(options: RayEmbeddingOptions) -> AsyncIterator[RayEmbedder]:
    """Start ``workers`` actors (each opens the inner provider once); they are killed when the host stops.

    Raises:
        ProviderUnavailableError: Ray could not be started or reached, or the workers were not placed
            and ready within ``start_timeout_seconds`` (a cluster without the resources they reserve).
        RagConfigurationError: the inner provider is unknown or its options are invalid (from a worker).
        ProviderResponseError: the workers disagree on the model (a heterogeneous cluster).
    """
    import ray

    async with ray_session(options):
        remote_worker = ray.remote(
            num_cpus=options.cpus_per_worker,
            num_gpus=options.gpus_per_worker,
            max_restarts=1,  # a worker lost mid-run is restarted once and its batch retried
            max_task_retries=1,
        )(EmbeddingWorker)
        # Named, so an operator sees them in `ray list actors` (and tests can find them).
        pool = f"runiq-embedding-{uuid.uuid4().hex[:8]}"
        actors = [
            remote_worker.options(name=f"{pool}-{i}").remote(
                options.embedding_provider, options.embedding_options, options.plugin_modules
            )
            for i in range(options.workers)
        ]
        started = False
        try:
            identities = await _started(actors, options)
            started = True
            if len(set(identities)) != 1:
                raise ProviderResponseError(PROVIDER_NAME, "the Ray workers disagree on the embedding model")
            model_name, dimensions = identities[0]
            yield RayEmbedder(actors, model_name=model_name, dimensions=dimensions)
        finally:
            await asyncio.to_thread(_stop, actors, closing=started)


async def _started(actors: Sequence[Any], options: RayEmbeddingOptions) -> list[Any]:
    """Each worker's model identity, once all are placed and have opened the inner provider."""
    describing = translated(lambda: asyncio.gather(*(_call(actor.describe) for actor in actors)), worker_failed)
    try:
        async with asyncio.timeout(options.start_timeout_seconds):
            return list(await describing)
    except TimeoutError:
        pass
    # Raised outside ``except``: nothing to chain, and the pending calls are cancelled by now.
    reason = (
        f"the Ray workers were not ready within {options.start_timeout_seconds:g} s; each reserves "
        f"{options.cpus_per_worker:g} CPUs and {options.gpus_per_worker:g} GPUs, which the cluster may not have"
    )
    raise ProviderUnavailableError(PROVIDER_NAME, reason)


def _stop(actors: Sequence[Any], *, closing: bool) -> None:
    """Kill the pool; workers that started are asked to close their provider first (never one still
    pending: its close would wait for a placement that may never come)."""
    import ray

    for actor in actors:
        if closing:
            # A dead or stuck actor is killed below either way.
            with contextlib.suppress(Exception):
                ray.get(actor.close.remote(), timeout=30)
        ray.kill(actor, no_restart=True)
