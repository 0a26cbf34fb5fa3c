"""runiq-ray: the embedding stage of ingestion on a Ray cluster, a pool of actors that each hold the model.

Example::

    from runiq_ray import RayEmbedding
    from runiq_sentence_transformers import SentenceTransformerEmbedding

    model = SentenceTransformerEmbedding(device="cuda")
    index.use_embedding(RayEmbedding(embedding=model, workers=4, gpus_per_worker=1))
"""

from __future__ import annotations

from runiq_ray.embedder import RayEmbedder, open_ray_embedder
from runiq_ray.options import RayEmbeddingOptions
from runiq_ray.selection import RayEmbedding

__all__ = ["RayEmbedder", "RayEmbedding", "RayEmbeddingOptions", "open_ray_embedder"]
