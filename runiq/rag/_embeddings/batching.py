"""Batching with bounded concurrency and strict shape checks around any :class:`EmbeddingClient`."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from runiq.errors import first_leaf
from runiq.rag._embeddings.base import EmbeddingClient, EmbeddingInputKind
from runiq.rag._errors import ProviderResponseError, ProviderTimeoutError, RagConfigurationError

if TYPE_CHECKING:
    from runiq.rag._embeddings.base import FloatMatrix, FloatVector

__all__ = [
    "DEFAULT_EMBEDDING_BATCH_SIZE",
    "DEFAULT_EMBEDDING_CONCURRENCY",
    "DEFAULT_EMBEDDING_TIMEOUT_SECONDS",
    "MAX_EMBEDDING_TIMEOUT_SECONDS",
    "EmbeddingBatcher",
    "embedding_timeout",
]

DEFAULT_EMBEDDING_BATCH_SIZE = 64
DEFAULT_EMBEDDING_CONCURRENCY = 2
# Every provider call is bounded: a hanging provider must not hang ingestion or a query. A minute
# covers a remote API with a retry or two and a local model encoding a full batch on a CPU.
DEFAULT_EMBEDDING_TIMEOUT_SECONDS = 60.0
MAX_EMBEDDING_TIMEOUT_SECONDS = 3600.0


def embedding_timeout(value: object) -> float:
    """The one rule for an embedding call's timeout: finite seconds, above 0 and at most an hour."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 < value <= MAX_EMBEDDING_TIMEOUT_SECONDS
    ):
        raise RagConfigurationError(
            f"Embedding timeout_seconds must be greater than 0 and at most {MAX_EMBEDDING_TIMEOUT_SECONDS:g}."
        )
    return float(value)


class EmbeddingBatcher:
    """Sends ``batch_size`` texts per call, at most ``concurrency`` calls at once, and checks each answer.

    A call of more than one batch sorts its texts by length (longest first) before batching and
    returns the vectors in the caller's order.

    Each call gets ``timeout_seconds`` (60 s unless configured) and then fails with
    :class:`ProviderTimeoutError`; the time a call waits for a concurrency slot does not count.
    A provider that returns the wrong number of rows, the wrong dimension or non-finite values fails
    with :class:`ProviderResponseError` instead of silently corrupting the index.
    """

    def __init__(
        self,
        client: EmbeddingClient,
        *,
        provider: str,
        batch_size: int = DEFAULT_EMBEDDING_BATCH_SIZE,
        concurrency: int = DEFAULT_EMBEDDING_CONCURRENCY,
        timeout_seconds: float = DEFAULT_EMBEDDING_TIMEOUT_SECONDS,
    ) -> None:
        if batch_size <= 0:
            raise RagConfigurationError("Embedding batch_size must be greater than zero.")
        if concurrency <= 0:
            raise RagConfigurationError("Embedding concurrency must be greater than zero.")
        self._client = client
        self._provider = provider
        self._batch_size = batch_size
        self._semaphore = asyncio.Semaphore(concurrency)
        self._timeout = embedding_timeout(timeout_seconds)
        self.calls = 0  # provider calls made, for ingestion progress and benchmarks

    @property
    def client(self) -> EmbeddingClient:
        return self._client

    @property
    def timeout_seconds(self) -> float:
        return self._timeout

    async def embed(
        self,
        texts: Sequence[str],
        kind: EmbeddingInputKind = EmbeddingInputKind.DOCUMENT,
        *,
        on_batch: Callable[[int], None] | None = None,
    ) -> FloatMatrix:
        """Vectors for ``texts`` in their order; ``on_batch`` hears the size of each batch as it returns."""
        import numpy as np  # loaded by then: the client returns numpy arrays

        dims = self._client.dimensions
        if not texts:
            return np.empty((0, dims), dtype=np.float32)
        if len(texts) <= self._batch_size:
            return await self._one(texts, kind, dims, on_batch)
        # Longest first, as SentenceTransformer.encode sorts a call's texts: each batch holds texts of
        # similar length, so a local model pads less. The rows go back to the caller's order below.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]), reverse=True)
        ordered = [texts[i] for i in order]
        batches = [ordered[i : i + self._batch_size] for i in range(0, len(ordered), self._batch_size)]
        failed: BaseException | None = None
        call = _Call()
        try:
            async with asyncio.TaskGroup() as group:
                tasks = [group.create_task(self._one(batch, kind, dims, on_batch, call)) for batch in batches]
        except ExceptionGroup as failures:
            failed = first_leaf(failures)
        if failed is not None:
            # One failed batch fails the call with its own error type, raised outside the handler so the
            # group (the other batches' raw exceptions) is not chained to it as __context__.
            raise failed
        restored: FloatMatrix = np.empty((len(texts), dims), dtype=np.float32)
        start = 0
        for task in tasks:  # each batch's rows straight to the caller's positions: one copy of the vectors
            rows = task.result()
            restored[order[start : start + len(rows)]] = rows
            start += len(rows)
        return restored

    async def embed_query(self, text: str) -> FloatVector:
        matrix = await self.embed([text], EmbeddingInputKind.QUERY)
        vector: FloatVector = matrix[0]
        return vector

    async def _one(
        self,
        batch: Sequence[str],
        kind: EmbeddingInputKind,
        dims: int,
        on_batch: Callable[[int], None] | None = None,
        call: _Call | None = None,
    ) -> FloatMatrix:
        try:
            return await self._checked(batch, kind, dims, on_batch, call)
        except BaseException:
            if call is not None:
                call.failed = True  # before any sibling waiting for the slot this batch freed can start
            raise

    async def _checked(
        self,
        batch: Sequence[str],
        kind: EmbeddingInputKind,
        dims: int,
        on_batch: Callable[[int], None] | None,
        call: _Call | None,
    ) -> FloatMatrix:
        async with self._semaphore:
            if call is not None and call.failed:
                raise asyncio.CancelledError  # a sibling batch failed the call: never start this one
            self.calls += 1
            timed_out = False
            try:
                async with asyncio.timeout(self._timeout):
                    result = await self._client.embed(batch, kind)
            except ProviderTimeoutError:
                raise
            except TimeoutError:
                timed_out = True  # raised below, outside the handler: nothing of the provider's is chained
        if timed_out:
            raise ProviderTimeoutError(self._provider, self._timeout)
        import numpy as np

        matrix = np.asarray(result, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(batch):
            raise ProviderResponseError(
                self._provider, "the provider returned a result count that does not match the batch"
            )
        if matrix.shape[1] != dims:
            raise ProviderResponseError(self._provider, "the provider returned vectors of an unexpected dimension")
        if not np.isfinite(matrix).all():
            raise ProviderResponseError(self._provider, "the provider returned non-finite values")
        if on_batch is not None:
            on_batch(len(batch))
        return matrix


class _Call:
    """One multi-batch ``embed`` call: once a batch fails, batches not yet started are not sent."""

    __slots__ = ("failed",)

    def __init__(self) -> None:
        self.failed = False
