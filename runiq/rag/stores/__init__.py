"""Vector stores: the boundary protocols, score semantics and the in-memory store."""

from __future__ import annotations

from runiq.rag.stores.base import (
    BulkDocumentWriter,
    DistanceMetric,
    DocumentCounter,
    DocumentWrite,
    HealthCheck,
    IndexSpec,
    LexicalSearch,
    StoredDocument,
    StoreHealth,
    StoreHit,
    VectorStore,
)
from runiq.rag.stores.memory import InMemoryVectorStore, InMemoryVectorStoreSelection

__all__ = [
    "BulkDocumentWriter",
    "DistanceMetric",
    "DocumentCounter",
    "DocumentWrite",
    "HealthCheck",
    "InMemoryVectorStore",
    "InMemoryVectorStoreSelection",
    "IndexSpec",
    "LexicalSearch",
    "StoreHealth",
    "StoreHit",
    "StoredDocument",
    "VectorStore",
]
