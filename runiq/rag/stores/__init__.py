"""Vector stores: the boundary protocols, score semantics and the in-memory store."""

from __future__ import annotations

from runiq.rag.stores.base import (
    DistanceMetric,
    IndexSpec,
    LexicalSearch,
    StoredDocument,
    StoreHit,
    VectorStore,
)
from runiq.rag.stores.memory import InMemoryVectorStore, InMemoryVectorStoreSelection

__all__ = [
    "DistanceMetric",
    "InMemoryVectorStore",
    "InMemoryVectorStoreSelection",
    "IndexSpec",
    "LexicalSearch",
    "StoreHit",
    "StoredDocument",
    "VectorStore",
]
