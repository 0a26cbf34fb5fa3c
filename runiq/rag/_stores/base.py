"""The vector store boundary.

A store persists, per logical index, documents (with the content hash that produced them) and their
chunk sets (content, metadata, and a vector when the index has an embedding model). Writes are per
document and atomic: after ``replace_document`` the document has exactly the new chunk set, never a
mix. Lexical search is a separate capability (:class:`LexicalSearch`) so a store may offer semantic
search only; the retriever then refuses lexical and hybrid queries with a clear error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from runiq.errors import SchemaMismatchError
from runiq.rag._documents import ChunkKey, Metadata, RagChunk
from runiq.rag._limits import validate_count
from runiq.rag._stores.filters import FilterSpec

if TYPE_CHECKING:
    from runiq.rag._embeddings.base import FloatMatrix, FloatVector
    from runiq.rag._ingestion.operation import RagIngestionOperation
    from runiq.rag._lexical.query import LexicalQuery

__all__ = [
    "BulkDocumentWriter",
    "BulkLoading",
    "DistanceMetric",
    "DocumentCounter",
    "DocumentStamps",
    "DocumentWrite",
    "HealthCheck",
    "IngestionHistory",
    "IndexSpec",
    "IngestionCoordinator",
    "LexicalSearch",
    "StoreHealth",
    "StoreHit",
    "StoredDocument",
    "VectorStore",
    "ensure_compatible",
    "validate_top_k",
]


class DistanceMetric(StrEnum):
    """How vectors are compared. Each metric has its own raw-score direction (see ``scoring``)."""

    COSINE = "cosine"
    EUCLIDEAN = "euclidean"
    DOT_PRODUCT = "dot_product"


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexSpec:
    """What an index was built with. A store refuses to mix vectors from a different model or dimension.

    ``dimensions`` and ``embedding_model`` are ``None`` for a lexical-only index (no embedding client).
    """

    name: str
    dimensions: int | None
    metric: DistanceMetric = DistanceMetric.COSINE
    embedding_model: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredDocument:
    """A document's identity and the hash of the content and configuration its chunks came from.

    ``stamp`` is what its source listed it with (see :class:`DocumentStamps`), or None: a document
    written without one (the document API, a source without stamps) clears the stored stamp."""

    document_id: str
    content_hash: str
    title: str | None = None
    metadata: Metadata = field(default_factory=dict)
    stamp: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreHit:
    """One store result with its score semantics.

    ``raw_score`` is the store's own value, interpreted through ``metric`` and ``higher_is_better``;
    ``relevance`` is in [0, 1] only where the store documents the transformation, else ``None``.
    """

    document_id: str
    chunk_id: str
    content: str
    metadata: Metadata
    raw_score: float
    metric: str
    higher_is_better: bool
    relevance: float | None

    @property
    def key(self) -> ChunkKey:
        return ChunkKey(self.document_id, self.chunk_id)


@runtime_checkable
class VectorStore(Protocol):
    """Durable or in-memory storage of chunk sets and their vectors, with metadata-filtered search.

    Filters are the language of :mod:`runiq.rag._stores.filters` (equality such as ``{"team": "hr"}``,
    operators, ``$and``/``$or``/``$not``, list-valued metadata), with its equality (``3 == 3.0``,
    ``True != 1``, ``"3" != 3``) and ordering; a store passes ``filters`` through
    :func:`~runiq.rag._stores.filters.validate_filters` (or ``parse_filter`` for the tree) and ``top_k``
    through :func:`validate_top_k` before any backend work. ``MetadataFilterContract`` pins the semantics.
    """

    @property
    def store_kind(self) -> str:
        """A short display name ("in-memory", "postgresql"); never a DSN or path."""
        ...

    async def ensure_index(self, spec: IndexSpec) -> None:
        """Create the index or check it matches; raises ``SchemaMismatchError`` on a different model/dimension."""
        ...

    async def replace_document(
        self,
        index_name: str,
        document: StoredDocument,
        chunks: Sequence[RagChunk],
        vectors: FloatMatrix | None,
    ) -> None:
        """Atomically replace the document's chunk set (``vectors`` row i belongs to ``chunks[i]``)."""
        ...

    async def delete_documents(self, index_name: str, document_ids: Sequence[str]) -> int:
        """Remove documents and their chunks; returns how many documents existed."""
        ...

    async def document_hashes(self, index_name: str, document_ids: Sequence[str] | None = None) -> Mapping[str, str]:
        """``document_id -> content_hash`` for incremental ingestion: of ``document_ids`` that are stored
        (ingestion asks a window at a time), or of everything stored when ``document_ids`` is None."""
        ...

    async def document_id_page(self, index_name: str, *, after: str | None, limit: int) -> Sequence[str]:
        """Up to ``limit`` stored document ids after ``after`` (None: from the start) in the store's id order,
        the same on every call (a database may use its collation). Ingestion pages through them to find
        deleted documents: each id comes exactly once."""
        ...

    async def search(
        self,
        index_name: str,
        vector: FloatVector,
        *,
        top_k: int,
        filters: FilterSpec | None = None,
    ) -> list[StoreHit]:
        """Exact or approximate nearest chunks, best first, at most ``top_k``."""
        ...

    async def count(self, index_name: str) -> int:
        """Number of chunks stored for the index (0 when it does not exist)."""
        ...


class DocumentWrite(NamedTuple):
    """One document's new version for a bulk write: ``vectors`` row i belongs to ``chunks[i]``."""

    document: StoredDocument
    chunks: Sequence[RagChunk]
    vectors: FloatMatrix | None


@runtime_checkable
class BulkDocumentWriter(Protocol):
    """Optional capability: replace several documents in one transaction.

    All-or-nothing for the batch, and per document the same semantics as ``replace_document``: after
    a crash every document is at its old version or its new one. Each id appears at most once. Managed
    ingestion writes every embedded group through it when the store offers it.
    """

    async def replace_documents(self, index_name: str, items: Sequence[DocumentWrite]) -> None: ...


@runtime_checkable
class BulkLoading(Protocol):
    """Optional capability: a mode for loading many documents into an index at once.

    Inside ``async with store.bulk_load(index_name)`` the store may defer the upkeep of what it builds
    per row (PostgreSQL drops its secondary indexes and rebuilds them, and builds its vector index,
    once on exit). Every write keeps its usual semantics, writes of other callers and processes
    included, and searches stay correct (they may be slower until the block exits). The block's exit
    restores the index on success, failure and cancellation alike; a process killed inside the block
    leaves an index that works, and the store restores what it deferred when the index is next opened
    (``ensure_index``). Managed ingestion enters it for a run that starts on an index with no documents.
    """

    def bulk_load(self, index_name: str) -> AbstractAsyncContextManager[None]: ...


@runtime_checkable
class DocumentCounter(Protocol):
    """Optional capability: the number of stored documents in one cheap read (the dashboard shows it).

    A store without it is counted by paging through ``document_id_page``."""

    async def document_count(self, index_name: str) -> int:
        """Number of documents stored for the index (0 when it does not exist); ``count`` counts chunks."""
        ...


@runtime_checkable
class DocumentStamps(Protocol):
    """Optional capability: each document's source stamp, kept beside its content hash.

    A stamp (an opaque string, see :class:`~runiq.rag._sources.StampedSource`) lets ingestion take a
    document as unchanged without reading it. ``replace_document`` and ``replace_documents`` store
    ``StoredDocument.stamp`` (None clears it); a store without this capability is always read in full.
    """

    async def document_stamps(self, index_name: str, document_ids: Sequence[str]) -> Mapping[str, str]:
        """``document_id -> stamp`` of those of ``document_ids`` that are stored with a stamp (a window
        at a time)."""
        ...

    async def update_stamps(self, index_name: str, stamps: Mapping[str, str]) -> None:
        """Set the stamps of stored documents (read again and found unchanged); ids not stored are ignored."""
        ...


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreHealth:
    """Whether a store can serve. ``reason`` is a fixed code when it cannot (``unreachable``,
    ``extension_missing``, ``schema_outdated``, ``schema_newer``, ...), never a server message."""

    healthy: bool
    reason: str | None = None


@runtime_checkable
class HealthCheck(Protocol):
    """Optional capability: a cheap probe (connect, extensions, schema version) that never raises."""

    async def health(self) -> StoreHealth: ...


@runtime_checkable
class IngestionHistory(Protocol):
    """Optional capability: finished ingestion operations persist with the index, so status, the
    dashboard and other replicas see them after a restart. Records hold ids, counters and failure
    codes, never content."""

    async def record_operation(self, operation: RagIngestionOperation) -> None:
        """Keep a finished operation (the index may not exist yet: then nothing is kept)."""
        ...

    async def recent_operations(self, index_name: str, *, limit: int) -> Sequence[RagIngestionOperation]:
        """The newest finished operations of the index, newest first."""
        ...


@runtime_checkable
class IngestionCoordinator(Protocol):
    """Optional capability: a cross-process lease so one instance runs an index's scheduled ingestion."""

    def ingestion_lease(self, index_name: str) -> AbstractAsyncContextManager[bool]:
        """Yields True when this process holds the lease for the block, False when another one does."""
        ...


@runtime_checkable
class LexicalSearch(Protocol):
    """The optional lexical capability: ranked keyword search with exact-phrase intent."""

    async def lexical_search(
        self,
        index_name: str,
        query: LexicalQuery,
        *,
        top_k: int,
        filters: FilterSpec | None = None,
    ) -> list[StoreHit]: ...


def validate_top_k(top_k: int) -> None:
    """Shared by every store: ``top_k`` is an integer candidate limit from 1 to ``MAX_CANDIDATES``."""
    validate_count(top_k, "top_k")


def ensure_compatible(stored: IndexSpec, wanted: IndexSpec) -> None:
    """Shared by every store: refuse to mix vectors from another dimension, model or metric."""
    if stored.dimensions != wanted.dimensions:
        raise SchemaMismatchError(stored.name, "dimension", str(stored.dimensions), str(wanted.dimensions))
    if stored.embedding_model != wanted.embedding_model:
        raise SchemaMismatchError(
            stored.name, "embedding model", str(stored.embedding_model), str(wanted.embedding_model)
        )
    if stored.metric is not wanted.metric:
        raise SchemaMismatchError(stored.name, "metric", stored.metric.value, wanted.metric.value)
