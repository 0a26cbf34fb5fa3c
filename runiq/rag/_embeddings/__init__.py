"""Embedding clients: the boundary protocol, batching, and the built-in hashing embedder."""

from __future__ import annotations

from runiq.rag._embeddings.base import EmbeddingClient, EmbeddingInputKind
from runiq.rag._embeddings.batching import EmbeddingBatcher
from runiq.rag._embeddings.hashing import HashingEmbedder, HashingEmbedding

__all__ = ["EmbeddingBatcher", "EmbeddingClient", "EmbeddingInputKind", "HashingEmbedder", "HashingEmbedding"]
