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


# Nearly the same length in characters, different lengths in tokens: digits and rare words split into many
# word pieces, common words are one each.
_UNEVEN = [
    "the cat sat on the mat and the dog sat too",
    "zygomorphic 8271 9354 quux xylophonist 6620",
    "a short one",
    "we went to the shop and then we came home",
    "17 2934 58817 340 9921 77 1284 30 66 90 1",
    "",
    "policies",
]


class TokenisingModel:
    """A fake model with a given tokenizer (MiniLM's, or none): records each encode's texts, returns each
    text's length as its vector."""

    def __init__(self, minilm: Any | None) -> None:
        self.tokenizer = None if minilm is None else minilm.tokenizer
        self.max_seq_length = None if minilm is None else minilm.max_seq_length
        self.calls: list[list[str]] = []

    def get_embedding_dimension(self) -> int:
        return 1

    def encode_document(self, texts: list[str], **kwargs: Any) -> np.ndarray:
        self.calls.append(list(texts))
        return np.array([[len(text)] for text in texts], dtype=np.float32)


def _tokens(minilm: Any, text: str) -> int:
    return len(minilm.tokenizer(text)["input_ids"])


async def test_a_call_is_encoded_most_tokens_first_one_batch_at_a_time(minilm) -> None:
    """Texts are sorted by token count (not characters, as encode would), one encode per batch, and the rows
    come back in the caller's order."""
    model = TokenisingModel(minilm)
    embedder = SentenceTransformerEmbedder(model, model_name="fake", batch_size=3)
    result = await embedder.embed(_UNEVEN, DOC)
    assert [len(call) for call in model.calls] == [3, 3, 1]
    sent = [text for call in model.calls for text in call]
    tokens = [_tokens(minilm, text) for text in sent]
    assert tokens == sorted(tokens, reverse=True)
    assert sent != sorted(_UNEVEN, key=len, reverse=True)  # the character order would have differed
    assert result[:, 0].tolist() == [len(text) for text in _UNEVEN]


async def test_a_model_without_a_hugging_face_tokenizer_is_sorted_by_characters() -> None:
    """No tokenizer to count with: longest first in characters, as encode sorts."""
    model = TokenisingModel(None)
    embedder = SentenceTransformerEmbedder(model, model_name="fake", batch_size=2)
    out = await embedder.embed(["bb", "a", "dddd", "ccc"], DOC)
    assert model.calls == [["dddd", "ccc"], ["bb", "a"]]
    assert out[:, 0].tolist() == [2, 1, 4, 3]


async def test_sorted_batches_give_a_direct_encodes_vectors_in_order(minilm) -> None:
    """Batched by token count, the real model's vectors equal one encode of the same texts, row for row."""
    embedder = SentenceTransformerEmbedder(minilm, model_name="m", batch_size=2)
    result = await embedder.embed(_UNEVEN, DOC)
    direct = minilm.encode(_UNEVEN, batch_size=2, normalize_embeddings=True, show_progress_bar=False)
    np.testing.assert_allclose(result, direct, atol=1e-5)


async def test_a_batch_of_the_wrong_shape_fails_the_call() -> None:
    """A model whose batches disagree with the dimension it reports fails with a ProviderError, never a
    silently broadcast row."""
    model = TokenisingModel(None)
    model.get_embedding_dimension = lambda: 3  # type: ignore[method-assign]
    embedder = SentenceTransformerEmbedder(model, model_name="fake", batch_size=2)
    with pytest.raises(ProviderError):
        await embedder.embed(["bb", "a", "dddd"], DOC)
