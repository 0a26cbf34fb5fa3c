"""A deterministic, dependency-free embedder for tests and quick starts.

It is *lexical-ish*, not semantic. Each text becomes a bag of features hashed into ``dimensions``
signed buckets with a sublinear term frequency (``1 + ln tf``), then L2-normalised:

* the features are the default lexical analyzer's query terms (identifier-aware tokens, English stop
  words dropped), so identifiers such as ``POL-HR-014`` or ``filename.cs`` are features as written;
* alphabetic words are truncated to their first four characters (truncation stemming, a standard
  language-independent conflation). That is deliberately more aggressive than the exact-term lexical
  index: in hybrid mode this channel matches word families (``retrieval``/``retrieving``) that BM25
  without a stemmer misses, instead of repeating the lexical ranking with more noise.

Texts that share words get a high cosine similarity; texts that mean the same thing in different words
do not. There is no inverse document frequency (the embedder is stateless), so on natural-language
collections it ranks below BM25. Use a real model (``runiq-sentence-transformers``, ``runiq-openai``)
for semantic retrieval. The default 1,024 dimensions keep hash collisions rare for 1,000-character
chunks (about 100 distinct features each) while staying under pgvector's 2,000-dimension index limit.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runiq.rag._embeddings.base import EmbeddingInputKind
from runiq.rag._errors import RagConfigurationError
from runiq.rag._lexical.options import DEFAULT_ANALYZER

if TYPE_CHECKING:
    from runiq.rag._embeddings.base import FloatMatrix

__all__ = ["DEFAULT_DIMENSIONS", "HashingEmbedder", "HashingEmbedding", "hashing_features"]

DEFAULT_DIMENSIONS = 1024
_STEM_CHARACTERS = 4


@dataclass(frozen=True, slots=True, kw_only=True)
class HashingEmbedding:
    """Typed selection of the built-in hashing embedder: ``index.use_embedding(HashingEmbedding())``."""

    dimensions: int = DEFAULT_DIMENSIONS
    provider_name: str = "hashing"

    def __post_init__(self) -> None:
        if not 8 <= self.dimensions <= 65536:
            raise RagConfigurationError("Hashing embedder dimensions must be between 8 and 65536.")

    @property
    def display_name(self) -> str:
        return f"Hashing embedder ({self.dimensions} dimensions)"

    def provider_options(self) -> dict[str, object]:
        return {"dimensions": self.dimensions}


def hashing_features(text: str) -> Counter[str]:
    """Feature counts of one text: analyzer terms, alphabetic words truncated (see the module doc)."""
    features: Counter[str] = Counter()
    for term in DEFAULT_ANALYZER.query_terms(text):
        features[term[:_STEM_CHARACTERS] if term.isalpha() else term] += 1
    return features


@functools.lru_cache(maxsize=262_144)
def _bucket(feature: str, dims: int) -> tuple[int, float]:
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % dims, (1.0 if (value >> 63) & 1 else -1.0)


class HashingEmbedder:
    """The hashing embedding client; pure Python and numpy, deterministic across processes."""

    def __init__(self, dimensions: int = DEFAULT_DIMENSIONS) -> None:
        self._dims = dimensions

    @property
    def model_name(self) -> str:
        return f"runiq-hashing-v2-{self._dims}"

    @property
    def dimensions(self) -> int:
        return self._dims

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> FloatMatrix:
        if len(texts) <= 8:
            return self.embed_sync(texts)
        return await asyncio.to_thread(self.embed_sync, texts)

    def embed_sync(self, texts: Sequence[str]) -> FloatMatrix:
        import numpy as np  # imported when the host opened the provider (off the event loop)

        out = np.zeros((len(texts), self._dims), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature, count in hashing_features(text).items():
                bucket, sign = _bucket(feature, self._dims)
                out[row, bucket] += sign * (1.0 + math.log(count))
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out
