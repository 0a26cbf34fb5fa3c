"""A deterministic character n-gram embedder.

Each text is lower-cased (optionally), padded with one space on each side, and every run of ``n``
characters is hashed (BLAKE2b, so the result is the same in every process and on every machine) into
one of ``dimensions`` signed buckets. Rows are L2-normalised. Texts that share spellings get similar
vectors, which tolerates typos and inflections better than word hashing, but it is not a semantic model.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from runiq.rag.providers import EmbeddingInputKind

from runiq_example_plugin.options import CharNgramOptions

__all__ = ["CharNgramEmbedder"]

# Below this many texts the thread hop costs more than the hashing itself.
_INLINE_TEXTS = 8


def _bucket(feature: str, dims: int) -> tuple[int, float]:
    value = int.from_bytes(hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little")
    return value % dims, (1.0 if value >> 63 else -1.0)


class CharNgramEmbedder:
    """The embedding client behind the provider. Pure Python plus numpy; no I/O, no model files."""

    def __init__(self, options: CharNgramOptions | None = None) -> None:
        self._options = options or CharNgramOptions()

    @property
    def model_name(self) -> str:
        o = self._options
        return f"example-char-{o.n}grams-v1-{o.dimensions}{'' if o.lowercase else '-cased'}"

    @property
    def dimensions(self) -> int:
        return self._options.dimensions

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> npt.NDArray[np.float32]:
        # Queries and documents share one space: ``kind`` does not change the vector.
        if len(texts) <= _INLINE_TEXTS:
            return self.embed_sync(texts)
        return await asyncio.to_thread(self.embed_sync, texts)

    def embed_sync(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        o = self._options
        out = np.zeros((len(texts), o.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            padded = f" {text.lower() if o.lowercase else text} "
            for start in range(len(padded) - o.n + 1):
                bucket, sign = _bucket(padded[start : start + o.n], o.dimensions)
                out[row, bucket] += sign
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out
