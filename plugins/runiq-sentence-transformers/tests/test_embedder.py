"""The embedder: same vectors as encode(), in a worker thread, one encode at a time, content-free errors."""

from __future__ import annotations

import asyncio
import threading
import time
import traceback
from typing import Any

import numpy as np
import pytest
import structlog
from runiq.errors import ProviderError
from runiq.rag.providers import EmbeddingInputKind
from runiq.rag.testing.chains import assert_content_free

from runiq_sentence_transformers import SentenceTransformerEmbedder

DOC, QUERY = EmbeddingInputKind.DOCUMENT, EmbeddingInputKind.QUERY


async def test_vectors_match_a_direct_encode(embedder, minilm) -> None:
    """The plugin returns what SentenceTransformer.encode returns, normalised, 384 wide."""
    texts = ["Remote work is allowed three days a week.", "Expense receipts are due in thirty days.", ""]
    result = await embedder.embed(texts, DOC)
    direct = minilm.encode(texts, normalize_embeddings=True, show_progress_bar=False)
    assert result.shape == (3, 384)
    assert result.dtype == np.float32
    np.testing.assert_allclose(result, direct, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(result, axis=1), 1.0, atol=1e-5)
    assert embedder.model_name == "sentence-transformers:all-MiniLM-L6-v2"


async def test_normalisation_off_returns_the_models_own_output(minilm) -> None:
    """``normalize=False`` adds no normalisation (MiniLM's own pipeline ends in a Normalize module)."""
    raw = SentenceTransformerEmbedder(minilm, model_name="m+unnormalized", normalize=False)
    texts = ["a longer sentence about policies"]
    result = await raw.embed(texts, DOC)
    np.testing.assert_allclose(result, minilm.encode(texts, show_progress_bar=False), atol=1e-5)


async def test_empty_input_returns_an_empty_matrix(embedder) -> None:
    """No texts, no encode: a (0, 384) float32 matrix."""
    result = await embedder.embed([], DOC)
    assert result.shape == (0, 384)
    assert result.dtype == np.float32


class RecordingModel:
    """Stands in for a SentenceTransformer to observe how the embedder calls it."""

    def __init__(self, delay: float = 0.0, fail_with: str | None = None) -> None:
        self.delay = delay
        self.fail_with = fail_with
        self.calls: list[tuple[str, dict[str, Any], bool]] = []
        self.active = 0
        self.max_active = 0
        self._guard = threading.Lock()

    def get_embedding_dimension(self) -> int:
        return 4

    def _encode(self, method: str, texts: list[str], **kwargs: Any) -> np.ndarray:
        with self._guard:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            self.calls.append((method, kwargs, threading.current_thread() is threading.main_thread()))
            time.sleep(self.delay)
            if self.fail_with is not None:
                raise RuntimeError(f"{self.fail_with}: {texts}")
            return np.ones((len(texts), 4), dtype=np.float64)
        finally:
            with self._guard:
                self.active -= 1

    def encode_query(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        return self._encode("query", texts, **kwargs)

    def encode_document(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        return self._encode("document", texts, **kwargs)


async def test_encoding_runs_off_the_event_loop_with_the_configured_options() -> None:
    """Queries use encode_query, documents encode_document, in a worker thread, with batch_size and normalize."""
    model = RecordingModel()
    embedder = SentenceTransformerEmbedder(model, model_name="fake", batch_size=7, normalize=False)
    out = await embedder.embed(["q"], QUERY)
    await embedder.embed(["d1", "d2"], DOC)
    assert out.dtype == np.float32
    assert [(method, on_main) for method, _, on_main in model.calls] == [("query", False), ("document", False)]
    assert model.calls[0][1] == {
        "batch_size": 7,
        "normalize_embeddings": False,
        "convert_to_numpy": True,
        "show_progress_bar": False,
    }


async def test_one_encode_at_a_time_and_the_loop_stays_free() -> None:
    """Concurrent embeds are serialised per model, and the event loop keeps running meanwhile."""
    model = RecordingModel(delay=0.1)
    embedder = SentenceTransformerEmbedder(model, model_name="fake")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    tick_task = asyncio.create_task(ticker())
    await asyncio.gather(*(embedder.embed([f"t{i}"], DOC) for i in range(3)))
    tick_task.cancel()
    assert model.max_active == 1
    assert ticks >= 15


async def test_encode_failures_are_content_free(canary) -> None:
    """A model error quoting the input becomes a fixed-message ProviderError; logs keep only the type."""
    model = RecordingModel(fail_with="tokenizer exploded")
    embedder = SentenceTransformerEmbedder(model, model_name="fake")
    with structlog.testing.capture_logs() as events, pytest.raises(ProviderError) as caught:
        await embedder.embed([f"secret {canary}"], DOC)
    rendered = str(caught.value) + repr(caught.value) + "".join(traceback.format_exception(caught.value))
    assert canary not in rendered
    assert canary not in repr(events)
    assert events[0]["error"] == "RuntimeError"
    assert caught.value.__context__ is None  # ``from None`` would only hide the model's exception
    assert_content_free(caught.value, canary)
