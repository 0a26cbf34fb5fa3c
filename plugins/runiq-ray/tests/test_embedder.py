"""The Ray embedder: same vectors as in process, the contract, failures as content-free runiq errors."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio
from runiq.errors import ProviderError, ProviderUnavailableError
from runiq.rag import HashingEmbedding, RagConfigurationError
from runiq.rag._embeddings.hashing import HashingEmbedder
from runiq.rag.providers import EmbeddingClient, EmbeddingInputKind
from runiq.rag.testing import CANARY, EmbeddingClientContract
from runiq.rag.testing.chains import assert_content_free

from runiq_ray import RayEmbedder, RayEmbedding, open_ray_embedder

# One pool of actors for the module (starting actors costs about a second each on a loaded machine).
pytestmark = [pytest.mark.usefixtures("ray_cluster"), pytest.mark.asyncio(loop_scope="module")]


def _selection(**overrides: object) -> RayEmbedding:
    return RayEmbedding(embedding=HashingEmbedding(dimensions=64), workers=2, cpus_per_worker=0.5, **overrides)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ray_embedder(ray_cluster: None) -> AsyncIterator[RayEmbedder]:
    async with open_ray_embedder(_selection().options()) as embedder:
        yield embedder


class TestRayEmbedderContract(EmbeddingClientContract):
    @pytest.fixture
    def client(self, ray_embedder: RayEmbedder) -> EmbeddingClient:
        assert isinstance(ray_embedder, EmbeddingClient)
        return ray_embedder


async def test_vectors_and_identity_equal_the_in_process_provider(ray_embedder: RayEmbedder) -> None:
    texts = [f"document number {i} about policy {i % 7}" for i in range(100)]
    local = HashingEmbedder(64)
    expected = await local.embed(texts, EmbeddingInputKind.DOCUMENT)
    got = await ray_embedder.embed(texts, EmbeddingInputKind.DOCUMENT)
    np.testing.assert_array_equal(got, expected)
    # The index records the model, not the transport: turning Ray on does not re-embed.
    assert (ray_embedder.model_name, ray_embedder.dimensions) == (local.model_name, local.dimensions)
    assert ray_embedder.workers == 2


async def test_concurrent_batches_spread_over_the_workers_and_keep_their_order(ray_embedder: RayEmbedder) -> None:
    import asyncio

    batches = [[f"batch {b} text {i}" for i in range(16)] for b in range(12)]
    results = await asyncio.gather(*(ray_embedder.embed(b, EmbeddingInputKind.DOCUMENT) for b in batches))
    local = HashingEmbedder(64)
    for batch, result in zip(batches, results, strict=True):
        np.testing.assert_array_equal(result, await local.embed(batch, EmbeddingInputKind.DOCUMENT))


async def test_unknown_inner_provider_is_a_configuration_error_naming_it() -> None:
    options = RayEmbedding(embedding=HashingEmbedding(), workers=1, cpus_per_worker=0.5).options()
    options = options.model_copy(update={"embedding_provider": "no-such-embedder"})
    with pytest.raises(RagConfigurationError) as caught:
        async with open_ray_embedder(options):
            pass
    assert "no-such-embedder" in str(caught.value)
    assert "not installed" in str(caught.value)
    assert_content_free(caught.value)


async def test_invalid_inner_options_name_the_field_not_the_value() -> None:
    options = _selection().options().model_copy(update={"embedding_options": {"dimensions": CANARY}})
    with pytest.raises(RagConfigurationError) as caught:
        async with open_ray_embedder(options):
            pass
    assert "dimensions" in str(caught.value)
    assert_content_free(caught.value, CANARY)


async def test_a_worker_error_quoting_the_input_becomes_a_content_free_provider_error() -> None:
    options = (
        _selection()
        .options()
        .model_copy(
            update={"embedding_provider": "leaky", "embedding_options": {}, "plugin_modules": ("ray_test_providers",)}
        )
    )
    async with open_ray_embedder(options) as embedder:
        with pytest.raises(ProviderError) as caught:
            await embedder.embed([f"secret text {CANARY}"], EmbeddingInputKind.DOCUMENT)
    assert caught.value.provider == "ray"
    assert "RuntimeError" in str(caught.value)
    assert_content_free(caught.value, CANARY)


async def test_workers_the_cluster_cannot_place_fail_at_the_start_timeout_and_are_removed() -> None:
    """A pool reserving a GPU on a cluster without one is never placed: the host fails with
    ProviderUnavailableError at ``start_timeout_seconds`` (it used to wait forever) and kills the
    pending actors without waiting for them to close."""
    import ray

    before = _pool_actors(ray)
    options = _selection(gpus_per_worker=1.0, start_timeout_seconds=2.0).options()

    async def open_and_close() -> None:
        async with open_ray_embedder(options):
            pass

    with pytest.raises(ProviderUnavailableError) as caught:
        await asyncio.wait_for(open_and_close(), timeout=120)  # a hang guard, not a speed check
    assert caught.value.provider == "ray"
    assert "not ready within 2 s" in str(caught.value)
    assert "1 GPUs" in str(caught.value)
    assert_content_free(caught.value)
    for _ in range(100):  # ray.kill is asynchronous: the names go once the actors are gone
        if _pool_actors(ray) <= before:
            break
        await asyncio.sleep(0.1)
    assert _pool_actors(ray) <= before


def _pool_actors(ray: Any) -> set[str]:
    names = (entry["name"] for entry in ray.util.list_named_actors(all_namespaces=True))
    return {name for name in names if name.startswith("runiq-embedding-")}


async def test_selection_validates_where_it_is_written() -> None:
    with pytest.raises(RagConfigurationError, match="workers"):
        RayEmbedding(embedding=HashingEmbedding(), workers=0)
    assert "on Ray (3 workers)" in RayEmbedding(embedding=HashingEmbedding(), workers=3).display_name


async def test_a_batch_on_an_actor_lost_mid_call_is_retried_on_its_restart(tmp_path: Path) -> None:
    """The actor holding a batch dies; Ray restarts it (max_restarts=1) and runs the batch again there
    (max_task_retries=1): the caller gets the vectors, not an error."""
    import ray

    options = (
        RayEmbedding(embedding=HashingEmbedding(), workers=1, cpus_per_worker=0.5)
        .options()
        .model_copy(
            update={
                "embedding_provider": "gated",
                "embedding_options": {"folder": str(tmp_path)},
                "plugin_modules": ("ray_test_providers",),
            }
        )
    )
    async with open_ray_embedder(options) as embedder:
        call = asyncio.create_task(embedder.embed(["alpha", "beta"], EmbeddingInputKind.DOCUMENT))
        await _until_started(tmp_path, 1, call)
        ray.kill(embedder._actors[0], no_restart=False)  # the pool's one actor, holding the batch
        await _until_started(tmp_path, 2, call)  # again, in the restarted actor's process
        _touch(tmp_path / "release")
        vectors = await asyncio.wait_for(call, 120)
    np.testing.assert_array_equal(vectors, HashingEmbedder(8).embed_sync(["alpha", "beta"]))
    assert _started(tmp_path) == 2


def _started(folder: Path) -> int:
    """Worker processes that began the gated batch (each leaves ``started-<pid>``)."""
    return len(list(folder.glob("started-*")))


def _touch(path: Path) -> None:
    path.touch()


async def _until_started(folder: Path, count: int, call: asyncio.Task[object]) -> None:
    """Until ``count`` processes began the batch, or the call ended (then its result tells)."""
    while _started(folder) < count and not call.done():  # noqa: ASYNC110 - files written by Ray workers
        await asyncio.sleep(0.02)
