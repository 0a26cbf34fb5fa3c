"""runiq-ray: the embedding stage of ingestion on a Ray cluster, a pool of actors that each hold the model.

Example::

    from runiq_ray import RayEmbedding
    from runiq_sentence_transformers import SentenceTransformerEmbedding

    model = SentenceTransformerEmbedding(device="cuda")
    index.use_embedding(RayEmbedding(embedding=model, workers=4, gpus_per_worker=1))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from runiq_ray.options import RayEmbeddingOptions
from runiq_ray.selection import RayEmbedding

if TYPE_CHECKING:
    from runiq_ray.embedder import RayEmbedder, open_ray_embedder

__all__ = ["RayEmbedder", "RayEmbedding", "RayEmbeddingOptions", "open_ray_embedder"]


if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute

    def __getattr__(name: str) -> object:
        """The driver side loads on first use (PEP 562): its modules import numpy."""
        if name in ("RayEmbedder", "open_ray_embedder"):
            return getattr(importlib.import_module("runiq_ray.embedder"), name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
