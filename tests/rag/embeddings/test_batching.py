"""EmbeddingBatcher: batch splitting, bounded concurrency and strict checks of provider answers."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence

import numpy as np
import pytest

from runiq.errors import ProviderResponseError, ProviderTimeoutError
from runiq.rag import RagConfigurationError
from runiq.rag._embeddings import EmbeddingBatcher
from runiq.rag._embeddings.base import FloatMatrix
from runiq.rag.providers import EmbeddingInputKind, HashingEmbedder


class RecordingClient(HashingEmbedder):
    """Records batches and the peak number of concurrent calls; each call yields to the loop."""

    def __init__(self, dimensions: int = 16, delay: float = 0.0) -> None:
        super().__init__(dimensions)
        self.batches: list[list[str]] = []
        self.kinds: list[EmbeddingInputKind] = []
        self.in_flight = 0
        self.peak = 0
        self.delay = delay

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        self.batches.append(list(texts))
        self.kinds.append(kind)
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        try:
            await asyncio.sleep(self.delay)
            return self.embed_sync(texts)
        finally:
            self.in_flight -= 1


class BrokenClient:
    """Answers with whatever ``answer`` builds from the batch."""

    model_name = "broken"
    dimensions = 4

    def __init__(self, answer: Callable[[Sequence[str]], object]) -> None:
        self.answer = answer

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> object:
        return self.answer(texts)


def _texts(n: int) -> list[str]:
    return [f"text number {i}" for i in range(n)]


async def test_texts_are_split_into_batches_in_order() -> None:
    """10 texts with batch_size 4 are sent as 4, 4 and 2, and rows come back in input order."""
    client = RecordingClient()
    batcher = EmbeddingBatcher(client, provider="rec", batch_size=4, concurrency=3)
    texts = _texts(10)
    result = await batcher.embed(texts)
    assert sorted(len(b) for b in client.batches) == [2, 4, 4]
    assert sorted(t for b in client.batches for t in b) == sorted(texts)
    assert result.shape == (10, 16)
    assert result.dtype == np.float32
    assert result.flags["C_CONTIGUOUS"]
    np.testing.assert_array_equal(result, client.embed_sync(texts))


async def test_empty_input_makes_no_call() -> None:
    """No texts: an empty (0, dimensions) matrix and no provider call."""
    client = RecordingClient()
    result = await EmbeddingBatcher(client, provider="rec").embed([])
    assert result.shape == (0, 16)
    assert client.batches == []


async def test_concurrency_is_bounded() -> None:
    """At most ``concurrency`` calls run at once, and the bound is actually used."""
    client = RecordingClient(delay=0.01)
    await EmbeddingBatcher(client, provider="rec", batch_size=1, concurrency=2).embed(_texts(8))
    assert len(client.batches) == 8
    assert client.peak == 2


async def test_concurrency_one_is_sequential() -> None:
    """concurrency=1 never overlaps two calls."""
    client = RecordingClient(delay=0.005)
    await EmbeddingBatcher(client, provider="rec", batch_size=2, concurrency=1).embed(_texts(6))
    assert client.peak == 1


async def test_query_embedding_is_one_vector_of_kind_query() -> None:
    """embed_query returns one vector and tells the client it is a query."""
    client = RecordingClient()
    vector = await EmbeddingBatcher(client, provider="rec").embed_query("remote work")
    assert vector.shape == (16,)
    assert client.kinds == [EmbeddingInputKind.QUERY]
    np.testing.assert_array_equal(vector, client.embed_sync(["remote work"])[0])


async def test_documents_are_embedded_as_kind_document_by_default() -> None:
    """embed defaults to EmbeddingInputKind.DOCUMENT."""
    client = RecordingClient()
    await EmbeddingBatcher(client, provider="rec").embed(["a"])
    assert client.kinds == [EmbeddingInputKind.DOCUMENT]


@pytest.mark.parametrize(("batch_size", "concurrency"), [(0, 1), (-1, 1), (1, 0), (1, -2)])
def test_batch_size_and_concurrency_must_be_positive(batch_size: int, concurrency: int) -> None:
    """Non-positive batch size or concurrency is RagConfigurationError."""
    with pytest.raises(RagConfigurationError):
        EmbeddingBatcher(RecordingClient(), provider="rec", batch_size=batch_size, concurrency=concurrency)


@pytest.mark.parametrize(
    "answer",
    [
        pytest.param(lambda texts: np.zeros((len(texts) - 1, 4), dtype=np.float32), id="too-few-rows"),
        pytest.param(lambda texts: np.zeros((len(texts) + 1, 4), dtype=np.float32), id="too-many-rows"),
        pytest.param(lambda texts: np.zeros(4, dtype=np.float32), id="one-dimensional"),
        pytest.param(lambda texts: np.zeros((len(texts), 3), dtype=np.float32), id="wrong-dimension"),
        pytest.param(lambda texts: np.full((len(texts), 4), np.nan, dtype=np.float32), id="nan"),
        pytest.param(lambda texts: np.full((len(texts), 4), np.inf, dtype=np.float32), id="infinity"),
    ],
)
async def test_malformed_provider_answers_are_provider_response_errors(
    answer: Callable[[Sequence[str]], object],
) -> None:
    """Wrong row count, wrong dimension or non-finite values raise ProviderResponseError (not a group)."""
    batcher = EmbeddingBatcher(BrokenClient(answer), provider="broken", batch_size=2)  # type: ignore[arg-type]
    with pytest.raises(ProviderResponseError) as raised:
        await batcher.embed(["a", "b"])
    assert raised.value.provider == "broken"


async def test_provider_errors_keep_their_type() -> None:
    """A ProviderTimeoutError from the client reaches the caller as itself, not wrapped in a group."""

    def answer(texts: Sequence[str]) -> object:
        raise ProviderTimeoutError("slow", 1.5)

    batcher = EmbeddingBatcher(BrokenClient(answer), provider="slow")  # type: ignore[arg-type]
    with pytest.raises(ProviderTimeoutError):
        await batcher.embed(["a"])


async def test_one_bad_batch_fails_the_whole_call() -> None:
    """If any batch is malformed the call fails; no partial matrix is returned."""

    def answer(texts: Sequence[str]) -> object:
        rows = len(texts) if "bad" not in texts else len(texts) + 1
        return np.ones((rows, 4), dtype=np.float32)

    batcher = EmbeddingBatcher(BrokenClient(answer), provider="broken", batch_size=1)  # type: ignore[arg-type]
    assert (await batcher.embed(["good"])).shape == (1, 4)
    with pytest.raises(ProviderResponseError):
        await batcher.embed(["good", "bad", "good"])


class HangingClient(RecordingClient):
    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def test_every_call_has_a_60_second_timeout_by_default() -> None:
    """A batcher built without a timeout still bounds each provider call (it used to wait forever)."""
    assert EmbeddingBatcher(RecordingClient(), provider="rec").timeout_seconds == 60.0


@pytest.mark.parametrize("timeout", [0, -1.0, float("nan"), float("inf"), 3601, True, None])
def test_the_timeout_must_be_finite_positive_seconds(timeout: object) -> None:
    """Zero, negative, non-finite, over an hour, a bool or None is a configuration error."""
    with pytest.raises(RagConfigurationError, match="timeout_seconds"):
        EmbeddingBatcher(RecordingClient(), provider="rec", timeout_seconds=timeout)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["query", "documents"])
async def test_a_hanging_client_fails_with_provider_timeout_within_the_timeout(kind: str) -> None:
    """A call that never answers raises ProviderTimeoutError (naming provider and timeout) after the timeout."""
    batcher = EmbeddingBatcher(HangingClient(), provider="hang", batch_size=2, timeout_seconds=0.1)
    call = batcher.embed_query("remote work") if kind == "query" else batcher.embed(_texts(5))
    started = asyncio.get_running_loop().time()
    with pytest.raises(ProviderTimeoutError) as raised:
        await call
    assert asyncio.get_running_loop().time() - started < 1.0
    assert (raised.value.provider, raised.value.timeout_seconds) == ("hang", 0.1)


async def test_a_call_of_several_batches_sends_texts_longest_first_and_answers_in_input_order() -> None:
    """As SentenceTransformer.encode does within a call: batches of similar length, rows in the caller's order."""
    client = RecordingClient()
    batcher = EmbeddingBatcher(client, provider="rec", batch_size=3, concurrency=1)
    texts = ["a", "a much longer text than the others", "mid size", "bb", "quite long text here", "ccc", "mid two"]
    result = await batcher.embed(texts)
    sent = [t for batch in client.batches for t in batch]
    assert [len(t) for t in sent] == sorted((len(t) for t in texts), reverse=True)
    assert client.batches[0] == ["a much longer text than the others", "quite long text here", "mid size"]
    np.testing.assert_array_equal(result, client.embed_sync(texts))


async def test_each_batch_is_reported_as_it_returns() -> None:
    heard: list[int] = []
    batcher = EmbeddingBatcher(RecordingClient(), provider="rec", batch_size=4, concurrency=2)
    await batcher.embed(_texts(10), on_batch=heard.append)
    assert sorted(heard) == [2, 4, 4]


async def test_no_batch_starts_after_one_failed() -> None:
    """With one call at a time, a timed-out batch stops the call: the batches behind it are never sent."""

    class Hanging(RecordingClient):
        async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
            self.batches.append(list(texts))
            await asyncio.Event().wait()
            raise AssertionError("unreachable")

    client = Hanging()
    batcher = EmbeddingBatcher(client, provider="rec", batch_size=2, concurrency=1, timeout_seconds=0.05)
    heard: list[int] = []
    with pytest.raises(ProviderTimeoutError):
        await batcher.embed(_texts(8), on_batch=heard.append)
    assert len(client.batches) == 1 and batcher.calls == 1 and heard == []
