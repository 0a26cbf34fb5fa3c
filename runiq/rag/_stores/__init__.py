"""Vector stores: the boundary protocols, score semantics and the in-memory store."""

from __future__ import annotations

from typing import TYPE_CHECKING

from runiq.rag._lazy import lazy_face
from runiq.rag._stores.base import (
    BulkDocumentWriter,
    BulkLoading,
    DistanceMetric,
    DocumentCounter,
    DocumentStamps,
    DocumentWrite,
    HealthCheck,
    IndexSpec,
    LexicalSearch,
    StoredDocument,
    StoreHealth,
    StoreHit,
    VectorStore,
)

if TYPE_CHECKING:
    from runiq.rag._stores.memory import InMemoryVectorStore, InMemoryVectorStoreSelection

__all__ = [
    "BulkDocumentWriter",
    "BulkLoading",
    "DistanceMetric",
    "DocumentCounter",
    "DocumentStamps",
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

if not TYPE_CHECKING:  # hidden from type checkers, which would otherwise accept any attribute
    # The in-memory store's module imports numpy and the BM25 engine; the boundary protocols do not.
    __getattr__, __dir__ = lazy_face(__name__, __file__, __all__, globals())
