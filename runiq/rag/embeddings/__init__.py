"""Embedding clients: the boundary protocol, batching, and the built-in hashing embedder."""

from __future__ import annotations

from runiq.rag.embeddings.base import EmbeddingClient, EmbeddingInputKind
from runiq.rag.embeddings.batching import EmbeddingBatcher
from runiq.rag.embeddings.hashing import HashingEmbedder, HashingEmbedding

__all__ = ["EmbeddingBatcher", "EmbeddingClient", "EmbeddingInputKind", "HashingEmbedder", "HashingEmbedding"]
