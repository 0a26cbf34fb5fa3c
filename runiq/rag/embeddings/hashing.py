"""A deterministic, dependency-free embedder for tests and quick starts.

It is *lexical-ish*, not semantic: each token (see :mod:`runiq.rag.lexical.tokenizer`) and each
adjacent token pair is hashed into one of ``dimensions`` signed buckets with a sublinear term
frequency, and the vector is L2-normalised. Texts that share words get a high cosine similarity; texts
that mean the same thing in different words do not. Use a real model (``runiq-sentence-transformers``,
``runiq-openai``) for semantic retrieval.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from runiq.rag.embeddings.base import EmbeddingInputKind, FloatMatrix
from runiq.rag.errors import RagConfigurationError
from runiq.rag.lexical.tokenizer import tokenize

__all__ = ["HashingEmbedder", "HashingEmbedding"]


@dataclass(frozen=True, slots=True, kw_only=True)
class HashingEmbedding:
    """Typed selection of the built-in hashing embedder: ``index.use_embedding(HashingEmbedding())``."""

    dimensions: int = 384
    provider_name: str = "hashing"

    def __post_init__(self) -> None:
        if not 8 <= self.dimensions <= 65536:
            raise RagConfigurationError("Hashing embedder dimensions must be between 8 and 65536.")

    @property
    def display_name(self) -> str:
        return f"Hashing embedder ({self.dimensions} dimensions)"

    def provider_options(self) -> dict[str, object]:
        return {"dimensions": self.dimensions}


def _bucket(feature: str, dims: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dims, (1.0 if (value >> 63) & 1 else -1.0)


class HashingEmbedder:
    """The hashing embedding client; pure Python and numpy, deterministic across processes."""

    def __init__(self, dimensions: int = 384) -> None:
        self._dims = dimensions

    @property
    def model_name(self) -> str:
        return f"runiq-hashing-v1-{self._dims}"

    @property
    def dimensions(self) -> int:
        return self._dims

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        if len(texts) <= 8:
            return self.embed_sync(texts)
        return await asyncio.to_thread(self.embed_sync, texts)

    def embed_sync(self, texts: Sequence[str]) -> FloatMatrix:
        out = np.zeros((len(texts), self._dims), dtype=np.float32)
        for row, text in enumerate(texts):
            tokens = tokenize(text)
            features = Counter(tokens)
            features.update(f"{a} {b}" for a, b in itertools.pairwise(tokens))
            for feature, count in features.items():
                bucket, sign = _bucket(feature, self._dims)
                out[row, bucket] += sign * (1.0 + math.log(count))
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out
