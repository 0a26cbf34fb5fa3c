"""The driver's dispatch and the worker's error boundary, without a Ray cluster.

``RayEmbedder`` only calls ``actor.embed.remote(...)`` and awaits what it returns, so stand-in actors
whose ``remote`` returns a future show which actor got each batch. ``EmbeddingWorker`` does not import
Ray, so it runs here in process: the exception its ``embed`` raises is the one Ray would pickle and
format (traceback included) into its own error and logs.
"""

from __future__ import annotations

import asyncio
import pickle
import traceback
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import structlog
from runiq.errors import ProviderError, ProviderResponseError, ProviderUnavailableError
from runiq.rag import RagConfigurationError
from runiq.rag.providers import EmbeddingInputKind
from runiq.rag.testing import CANARY
from runiq.rag.testing.chains import assert_content_free

from runiq_ray import RayEmbedder
from runiq_ray.worker import EmbeddingWorker, WorkerFailure

DOC = EmbeddingInputKind.DOCUMENT
DIMENSIONS = 4


class _Method:
    def __init__(self) -> None:
        self.pending: list[asyncio.Future[Any]] = []

    def remote(self, texts: list[str], kind: str) -> asyncio.Future[Any]:
        future = asyncio.get_running_loop().create_future()
        self.pending.append(future)
        return future


class _Actor:
    def __init__(self) -> None:
        self.embed = _Method()


class _RayTaskError(Exception):
    """What Ray raises for a failed actor task: its ``cause`` is the worker's exception."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(f"ray.exceptions.RayTaskError: traceback ... {cause!r}")
        self.cause = cause


def _embedder(actors: int) -> tuple[RayEmbedder, list[_Actor]]:
    pool = [_Actor() for _ in range(actors)]
    return RayEmbedder(pool, model_name="m", dimensions=DIMENSIONS), pool


def _vectors(count: int) -> np.ndarray:
    return np.ones((count, DIMENSIONS), dtype=np.float32)


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_each_batch_goes_to_the_least_busy_actor() -> None:
    embedder, (first, second) = _embedder(2)
    one = asyncio.create_task(embedder.embed(["a"], DOC))
    two = asyncio.create_task(embedder.embed(["b"], DOC))
    await _settle()
    assert (len(first.embed.pending), len(second.embed.pending)) == (1, 1)
    second.embed.pending[0].set_result(_vectors(1))
    await two
    three = asyncio.create_task(embedder.embed(["c"], DOC))
    await _settle()
    assert (len(first.embed.pending), len(second.embed.pending)) == (1, 2)  # the second is idle again
    first.embed.pending[0].set_result(_vectors(1))
    second.embed.pending[1].set_result(_vectors(1))
    assert [r.shape for r in await asyncio.gather(one, three)] == [(1, DIMENSIONS)] * 2


async def test_a_lost_actor_gets_no_more_batches() -> None:
    """Ray answers a call to a dead actor at once, so least-busy dispatch would send it every batch:
    an actor reported dead (its restart used up) is left out, and a pool with none left says so."""
    from ray.exceptions import ActorDiedError, ActorUnavailableError

    embedder, (first, second) = _embedder(2)
    call = asyncio.create_task(embedder.embed(["a"], DOC))
    await _settle()
    first.embed.pending[0].set_exception(ActorUnavailableError("restarting", None))  # temporary: kept
    with pytest.raises(ProviderError):
        await call
    call = asyncio.create_task(embedder.embed(["b"], DOC))
    await _settle()
    first.embed.pending[1].set_exception(ActorDiedError())
    with pytest.raises(ProviderError):
        await call
    calls = [asyncio.create_task(embedder.embed([f"c{i}"], DOC)) for i in range(3)]
    await _settle()
    assert (len(first.embed.pending), len(second.embed.pending)) == (2, 3)
    for future in second.embed.pending:
        future.set_result(_vectors(1))
    await asyncio.gather(*calls)
    call = asyncio.create_task(embedder.embed(["d"], DOC))
    await _settle()
    second.embed.pending[3].set_exception(ActorDiedError())
    with pytest.raises(ProviderError):
        await call
    with pytest.raises(ProviderUnavailableError, match="every Ray worker"):
        await embedder.embed(["e"], DOC)
    assert (len(first.embed.pending), len(second.embed.pending)) == (2, 4)


async def test_a_caller_that_gives_up_cancels_the_ray_task(monkeypatch: pytest.MonkeyPatch) -> None:
    import ray

    cancelled: list[object] = []
    monkeypatch.setattr(ray, "cancel", cancelled.append)
    embedder, (actor,) = _embedder(1)
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(embedder.embed(["a"], DOC), 0.05)
    assert cancelled == actor.embed.pending
    follow = asyncio.create_task(embedder.embed(["b"], DOC))  # the slot is free again
    await _settle()
    actor.embed.pending[1].set_result(_vectors(1))
    assert (await follow).shape == (1, DIMENSIONS)


@pytest.mark.parametrize(
    "answer",
    [np.ones((2, DIMENSIONS + 1), dtype=np.float32), np.ones((1, DIMENSIONS)), [[1.0] * DIMENSIONS] * 2],
    ids=["wider", "fewer", "not-an-array"],
)
async def test_vectors_of_the_wrong_shape_are_refused(answer: object) -> None:
    embedder, (actor,) = _embedder(1)
    task = asyncio.create_task(embedder.embed(["a", "b"], DOC))
    await _settle()
    actor.embed.pending[0].set_result(answer)
    with pytest.raises(ProviderResponseError):
        await task


@pytest.mark.parametrize(
    ("error", "expected", "text"),
    [
        (_RayTaskError(RuntimeError(f"cannot embed {CANARY}")), ProviderError, "(_RayTaskError)"),
        (_RayTaskError(WorkerFailure("RuntimeError", "", configuration=False)), ProviderError, "(RuntimeError)"),
        (
            _RayTaskError(WorkerFailure("ProviderUnavailableError", "the provider failed to answer", False)),
            ProviderError,
            "(ProviderUnavailableError: the provider failed to answer)",
        ),
        (
            _RayTaskError(WorkerFailure("RagConfigurationError", "Unknown embedding provider 'x'.", True)),
            RagConfigurationError,
            "Unknown embedding provider 'x'.",
        ),
        (RuntimeError(f"actor died while embedding {CANARY}"), ProviderError, "(RuntimeError)"),
    ],
    ids=["foreign-cause", "worker-failure", "provider-error", "configuration", "ray-error"],
)
async def test_a_failed_task_becomes_a_content_free_runiq_error(
    error: Exception, expected: type[Exception], text: str
) -> None:
    embedder, (actor,) = _embedder(1)
    with structlog.testing.capture_logs() as events:
        task = asyncio.create_task(embedder.embed([f"secret {CANARY}"], DOC))
        await _settle()
        actor.embed.pending[0].set_exception(error)
        with pytest.raises(expected) as caught:
            await task
    assert text in str(caught.value)
    assert_content_free(caught.value, CANARY)
    assert CANARY not in repr(events)


# -- the worker, in process ------------------------------------------------------------------------


def _formatted(error: BaseException) -> str:
    return "".join(traceback.format_exception(error)) + repr(error.args)


def test_a_worker_error_quoting_the_input_leaves_the_worker_without_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """What Ray formats into its error and logs: the type name, no chained exception, no input."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # ray_test_providers, as the workers import it
    worker = EmbeddingWorker("leaky", {}, ("ray_test_providers",))
    try:
        with pytest.raises(WorkerFailure) as caught:
            worker.embed([f"secret text {CANARY}"], DOC.value)
    finally:
        worker.close()
    failure = caught.value
    assert (failure.kind, failure.message, failure.configuration) == ("RuntimeError", "", False)
    assert failure.__context__ is None
    assert failure.__cause__ is None
    assert CANARY not in _formatted(failure)
    copy = pickle.loads(pickle.dumps(failure))  # Ray pickles it to the driver
    assert (copy.kind, copy.message, copy.configuration) == ("RuntimeError", "", False)


def test_a_worker_keeps_a_provider_error_s_fixed_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """runiq's provider errors are content-free by contract: the worker passes their reason on."""
    monkeypatch.syspath_prepend(str(Path(__file__).parent))
    worker = EmbeddingWorker("unavailable", {}, ("ray_test_providers",))
    try:
        with pytest.raises(WorkerFailure) as caught:
            worker.embed([f"secret text {CANARY}"], DOC.value)
    finally:
        worker.close()
    failure = caught.value
    assert (failure.kind, failure.message) == ("ProviderUnavailableError", "the provider failed to answer")
    assert CANARY not in _formatted(failure)


def test_a_worker_that_cannot_open_its_provider_fails_each_call_with_a_configuration_error() -> None:
    worker = EmbeddingWorker("hashing", {"dimensions": CANARY})
    try:
        for call in (worker.describe, lambda: worker.embed(["a"], DOC.value)):
            with pytest.raises(WorkerFailure) as caught:
                call()
            assert caught.value.configuration
            assert "dimensions" in caught.value.message
            assert CANARY not in _formatted(caught.value)
    finally:
        worker.close()


def test_a_worker_embeds_with_the_inner_provider() -> None:
    worker = EmbeddingWorker("hashing", {"dimensions": 16})
    try:
        assert worker.describe()[1] == 16
        vectors = worker.embed(["a", "b"], DOC.value)
    finally:
        worker.close()
    assert vectors.shape == (2, 16)
    assert vectors.dtype == np.float32
