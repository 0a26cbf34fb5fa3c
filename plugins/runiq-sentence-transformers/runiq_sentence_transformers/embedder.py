"""The embedding client over a loaded :class:`sentence_transformers.SentenceTransformer`."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
from runiq.errors import ProviderError, ProviderResponseError, call_translated
from runiq.logging import get_logger
from runiq.rag.providers import EmbeddingInputKind

from runiq_sentence_transformers.options import PROVIDER_NAME
from runiq_sentence_transformers.ordering import most_tokens_first

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["SentenceTransformerEmbedder"]

FloatMatrix = npt.NDArray[np.float32]

log = get_logger(__name__)


class SentenceTransformerEmbedder:
    """An :class:`~runiq.rag.EmbeddingClient` for a local model; encoding runs in a worker thread.

    One encode runs at a time per embedder: torch already spreads one encode over every core, so
    parallel encodes only contend. The lock is taken inside the worker thread, so a caller cancelled
    mid-encode (a timeout) does not let the next encode start beside the one still running.
    Queries go through ``encode_query`` and documents through ``encode_document``, so models that
    define query/passage prompts get them; for the others both equal ``encode``. A call of more than
    one batch is sorted by token count (:mod:`ordering`) and encoded a batch at a time.
    """

    def __init__(
        self, model: SentenceTransformer, *, model_name: str, batch_size: int = 32, normalize: bool = True
    ) -> None:
        self._model = model
        self._model_name = model_name
        self._batch_size = batch_size
        self._normalize = normalize
        self._dimensions = _dimension(model)
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dimensions(self) -> int:
        return self._dimensions

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        if not texts:
            return np.empty((0, self._dimensions), dtype=np.float32)
        return await asyncio.to_thread(self.embed_sync, list(texts), kind)

    def embed_sync(self, texts: list[str], kind: EmbeddingInputKind) -> FloatMatrix:
        """Blocking encode; for benchmarks and callers already on a worker thread."""
        encode = self._model.encode_query if kind is EmbeddingInputKind.QUERY else self._model.encode_document
        with self._lock:
            vectors = call_translated(lambda: self._encode_in_batches(encode, texts), _encode_failed)
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def _encode_in_batches(self, encode: Callable[..., Any], texts: list[str]) -> FloatMatrix:
        """One ``encode`` per batch of texts with similar token counts; the rows in the caller's order."""
        size = self._batch_size
        if len(texts) <= size:
            return np.asarray(self._encode(encode, texts), dtype=np.float32)
        order = most_tokens_first(self._model, texts)
        out: FloatMatrix = np.empty((len(texts), self._dimensions), dtype=np.float32)
        for start in range(0, len(order), size):
            positions = order[start : start + size]
            rows = np.asarray(self._encode(encode, [texts[i] for i in positions]), dtype=np.float32)
            if rows.shape != (len(positions), self._dimensions):
                raise ProviderResponseError(PROVIDER_NAME, "the model returned vectors of an unexpected shape")
            out[positions] = rows
        return out

    def _encode(self, encode: Callable[..., Any], texts: list[str]) -> Any:
        return encode(
            texts,
            batch_size=self._batch_size,
            normalize_embeddings=self._normalize,
            convert_to_numpy=True,
            show_progress_bar=False,
        )


def _encode_failed(exc: Exception) -> ProviderError:
    """The exception text may quote the input: keep only its type, and do not chain it."""
    log.warning("sentence_transformers.encode_failed", provider=PROVIDER_NAME, error=type(exc).__name__)
    return ProviderError(PROVIDER_NAME, "the model failed to encode the batch")


def _dimension(model: SentenceTransformer) -> int:
    # sentence-transformers 5.x renamed get_sentence_embedding_dimension (now a FutureWarning).
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    dimension = getter()
    if not isinstance(dimension, int) or dimension <= 0:
        raise ProviderResponseError(PROVIDER_NAME, "the model does not report its embedding dimension")
    return dimension
