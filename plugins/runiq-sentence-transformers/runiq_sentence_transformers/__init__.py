"""runiq-sentence-transformers: local embeddings from local model directories, never from a hub.

Example::

    from runiq_sentence_transformers import SentenceTransformerEmbedding

    index.use_embedding(SentenceTransformerEmbedding())  # the packaged all-MiniLM-L6-v2
"""

from __future__ import annotations

from runiq_sentence_transformers.embedder import SentenceTransformerEmbedder
from runiq_sentence_transformers.loading import load_model, packaged_model_path, resolve_model_path
from runiq_sentence_transformers.options import SentenceTransformerOptions
from runiq_sentence_transformers.selection import SentenceTransformerEmbedding

__all__ = [
    "SentenceTransformerEmbedder",
    "SentenceTransformerEmbedding",
    "SentenceTransformerOptions",
    "load_model",
    "packaged_model_path",
    "resolve_model_path",
]
