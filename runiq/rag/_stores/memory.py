"""The in-memory store, for development, tests and small corpora.

Vectors live in one contiguous float32 matrix per index, grown geometrically (no per-vector Python
objects, no full copy per upsert). Deleted rows become holes that later inserts reuse, so row numbers
are stable and the metadata filter index (:mod:`runiq.rag._stores.memory_filter`) and the BM25 postings
never need renumbering. Search is one matrix-vector product in a worker thread plus ``argpartition``; the final
top-k raw scores are recomputed in float64 so reported scores are exact, and ties are broken by
``(document_id, chunk_id)``. Lexical search scores exact BM25 with numpy over per-term posting arrays
(:mod:`runiq.rag._lexical.engine`), with the same tie rule. Above ``_INLINE_ROWS`` rows both searches
run in a worker thread (:func:`~runiq.rag._stores._offload.run_to_completion`) that keeps the read lock
until it returns, even when the caller is cancelled; large writes likewise keep the write lock.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from runiq.rag._chunking.context import chunk_indexed_text, indexed_text
from runiq.rag._documents import ChunkKey, Metadata, RagChunk
from runiq.rag._embeddings.base import FloatMatrix, FloatVector
from runiq.rag._errors import (
    RagValidationError,
    VectorDimensionMismatchError,
    VectorIndexNotFoundError,
)
from runiq.rag._lexical.analysed import AnalysedQuery, analyse_query
from runiq.rag._lexical.engine import BM25Index
from runiq.rag._lexical.options import DEFAULT_ANALYZER, StemmerName, StopwordSetName
from runiq.rag._lexical.query import LexicalQuery, contains_phrase
from runiq.rag._lexical.selection import score_groups
from runiq.rag._lexical.tokenizer import Analyzer
from runiq.rag._stores import scoring
from runiq.rag._stores._offload import run_to_completion
from runiq.rag._stores._rwlock import ReadWriteLock
from runiq.rag._stores.base import (
    DistanceMetric,
    DocumentWrite,
    IndexSpec,
    StoredDocument,
    StoreHealth,
    StoreHit,
    ensure_compatible,
    validate_top_k,
)
from runiq.rag._stores.filters import FilterSpec, MetadataFilter, validate_filters
from runiq.rag._stores.memory_filter import MetadataIndex

__all__ = ["InMemoryVectorStore", "InMemoryVectorStoreSelection"]

_GROWTH = 1.125  # keeps spare capacity under ~12.5% while growth stays amortised O(1)
_MIN_CAPACITY = 64
_THREAD_WRITE_CHARACTERS = 64 * 1024  # larger writes tokenise in a worker thread, off the event loop
# Below this many rows the thread hop costs more than the product itself.
_INLINE_ROWS = 4096


@dataclass(frozen=True, slots=True, kw_only=True)
class InMemoryVectorStoreSelection:
    """Typed selection: ``index.use_vector_store(InMemoryVectorStoreSelection(stemmer="english"))``.

    ``stopwords`` and ``stemmer`` configure lexical ranking (see :class:`~runiq.rag._lexical.LexicalOptions`).
    """

    stopwords: StopwordSetName = "english"
    stemmer: StemmerName = "none"
    provider_name: str = "in-memory"
    display_name: str = "In-memory vector store"

    def provider_options(self) -> dict[str, object]:
        return {"stopwords": self.stopwords, "stemmer": self.stemmer}


@dataclass(slots=True)
class _Row:
    key: ChunkKey
    content: str
    metadata: Metadata


@dataclass(slots=True)
class _Index:
    spec: IndexSpec
    matrix: npt.NDArray[np.float32]
    sq_norms: npt.NDArray[np.float32]
    rows: list[_Row | None] = field(default_factory=list)
    holes: list[int] = field(default_factory=list)
    documents: dict[str, tuple[StoredDocument, list[int]]] = field(default_factory=dict)
    by_metadata: MetadataIndex = field(default_factory=MetadataIndex)
    lexical: BM25Index = field(default_factory=BM25Index)
    lock: ReadWriteLock = field(default_factory=ReadWriteLock)

    @property
    def used(self) -> int:
        return len(self.rows)

    @property
    def live(self) -> int:
        return len(self.rows) - len(self.holes)


def _indexed(row: _Row) -> str:
    """The text the row's lexical terms were computed from (:func:`~runiq.rag._chunking.context.indexed_text`)."""
    return indexed_text(row.key.document_id, row.content, row.metadata)


class InMemoryVectorStore:
    """Implements :class:`VectorStore`, :class:`LexicalSearch`, :class:`BulkDocumentWriter`,
    :class:`DocumentCounter`, :class:`DocumentStamps` and :class:`HealthCheck`. State is lost when the process ends."""

    def __init__(self, analyzer: Analyzer | None = None) -> None:
        self._indexes: dict[str, _Index] = {}
        self._analyzer = analyzer or DEFAULT_ANALYZER

    @property
    def store_kind(self) -> str:
        return "in-memory"

    # -- writes ------------------------------------------------------------------------------

    async def ensure_index(self, spec: IndexSpec) -> None:
        existing = self._indexes.get(spec.name)
        if existing is None:
            dims = spec.dimensions or 0
            self._indexes[spec.name] = _Index(
                spec=spec,
                matrix=np.zeros((0, dims), dtype=np.float32),
                sq_norms=np.zeros(0, dtype=np.float32),
                lexical=BM25Index(self._analyzer),
            )
            return
        ensure_compatible(existing.spec, spec)

    async def drop_index(self, index_name: str) -> None:
        self._indexes.pop(index_name, None)

    async def replace_document(
        self,
        index_name: str,
        document: StoredDocument,
        chunks: Sequence[RagChunk],
        vectors: FloatMatrix | None,
    ) -> None:
        await self.replace_documents(index_name, [DocumentWrite(document, chunks, vectors)])

    async def replace_documents(self, index_name: str, items: Sequence[DocumentWrite]) -> None:
        """Every item checked first, then all applied under one write lock: all or nothing."""
        index = self._require(index_name)
        if len({item.document.document_id for item in items}) != len(items):
            raise RagValidationError("Each document may appear only once in a bulk replace.")
        prepared = [self._prepare_vectors(index, item.chunks, item.vectors) for item in items]

        def apply() -> None:
            for item, vectors in zip(items, prepared, strict=True):
                self._remove_document(index, item.document.document_id)
                rows = [
                    self._insert(index, chunk, None if vectors is None else vectors[i])
                    for i, chunk in enumerate(item.chunks)
                ]
                index.documents[item.document.document_id] = (item.document, rows)

        async with index.lock.write():
            if sum(len(chunk.content) for item in items for chunk in item.chunks) < _THREAD_WRITE_CHARACTERS:
                apply()
                return
            # Tokenising megabytes blocks for seconds: a worker thread does it while the write lock is held.
            # A cancelled caller still waits for the thread, so the lock never opens on a half-applied batch.
            await run_to_completion(apply)

    async def delete_documents(self, index_name: str, document_ids: Sequence[str]) -> int:
        index = self._indexes.get(index_name)
        if index is None:
            return 0
        async with index.lock.write():
            return sum(1 for doc_id in document_ids if self._remove_document(index, doc_id))

    def _prepare_vectors(
        self, index: _Index, chunks: Sequence[RagChunk], vectors: FloatMatrix | None
    ) -> npt.NDArray[np.float32] | None:
        dims = index.spec.dimensions
        if dims is None:
            return None
        if vectors is None:
            raise RagValidationError("This index stores vectors; replace_document needs one vector per chunk.")
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or matrix.shape[0] != len(chunks):
            raise RagValidationError("replace_document needs exactly one vector per chunk.")
        if matrix.shape[1] != dims:
            raise VectorDimensionMismatchError(index.spec.name, dims, int(matrix.shape[1]))
        if not np.isfinite(matrix).all():
            raise RagValidationError("Vectors must be finite.")
        if index.spec.metric is DistanceMetric.COSINE:
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        return matrix

    def _insert(self, index: _Index, chunk: RagChunk, vector: npt.NDArray[np.float32] | None) -> int:
        row = _Row(key=chunk.key, content=chunk.content, metadata=chunk.metadata)
        if index.holes:
            slot = index.holes.pop()
            index.rows[slot] = row
        else:
            slot = index.used
            index.rows.append(row)
            self._reserve(index, slot + 1)
        if vector is not None:
            index.matrix[slot] = vector
            index.sq_norms[slot] = float(np.dot(vector, vector))
        index.by_metadata.add(slot, chunk.metadata)
        index.lexical.add(slot, chunk_indexed_text(chunk))
        return slot

    @staticmethod
    def _reserve(index: _Index, needed: int) -> None:
        capacity = index.matrix.shape[0]
        if needed <= capacity:
            return
        new_capacity = max(_MIN_CAPACITY, needed, math.ceil(capacity * _GROWTH))
        grown = np.zeros((new_capacity, index.matrix.shape[1]), dtype=np.float32)
        grown[:capacity] = index.matrix
        norms = np.zeros(new_capacity, dtype=np.float32)
        norms[:capacity] = index.sq_norms
        index.matrix, index.sq_norms = grown, norms

    def _remove_document(self, index: _Index, document_id: str) -> bool:
        entry = index.documents.pop(document_id, None)
        if entry is None:
            return False
        for slot in entry[1]:
            row = index.rows[slot]
            if row is None:
                continue
            index.by_metadata.remove(slot, row.metadata)
            index.lexical.remove_text(slot, _indexed(row))
            index.rows[slot] = None
            if index.spec.dimensions:
                index.matrix[slot] = 0.0
                index.sq_norms[slot] = 0.0
            index.holes.append(slot)
        return True

    # -- reads -------------------------------------------------------------------------------

    async def document_hashes(self, index_name: str, document_ids: Sequence[str] | None = None) -> Mapping[str, str]:
        index = self._indexes.get(index_name)
        if index is None:
            return {}
        documents = index.documents
        if document_ids is None:
            return {doc_id: entry[0].content_hash for doc_id, entry in documents.items()}
        return {doc_id: entry[0].content_hash for doc_id in document_ids if (entry := documents.get(doc_id))}

    async def document_stamps(self, index_name: str, document_ids: Sequence[str]) -> Mapping[str, str]:
        index = self._indexes.get(index_name)
        if index is None:
            return {}
        documents = index.documents
        return {
            doc_id: stamp
            for doc_id in document_ids
            if (entry := documents.get(doc_id)) is not None and (stamp := entry[0].stamp) is not None
        }

    async def update_stamps(self, index_name: str, stamps: Mapping[str, str]) -> None:
        index = self._indexes.get(index_name)
        if index is None:
            return
        documents = index.documents
        for doc_id, stamp in stamps.items():
            entry = documents.get(doc_id)
            if entry is not None:
                documents[doc_id] = (dataclasses.replace(entry[0], stamp=stamp), entry[1])

    async def document_id_page(self, index_name: str, *, after: str | None, limit: int) -> Sequence[str]:
        index = self._indexes.get(index_name)
        if index is None:
            return []
        ids = sorted(index.documents)  # fine for an in-memory index: ingestion pages through once per run
        start = 0 if after is None else bisect.bisect_right(ids, after)
        return ids[start : start + limit]

    async def health(self) -> StoreHealth:
        return StoreHealth(healthy=True)

    async def count(self, index_name: str) -> int:
        index = self._indexes.get(index_name)
        return 0 if index is None else index.live

    async def document_count(self, index_name: str) -> int:
        index = self._indexes.get(index_name)
        return 0 if index is None else len(index.documents)

    def stored_vector_bytes(self, index_name: str) -> int:
        """Bytes held for vectors (matrix plus norms), for memory benchmarks."""
        index = self._require(index_name)
        return int(index.matrix.nbytes + index.sq_norms.nbytes)

    def stored_lexical_bytes(self, index_name: str) -> int:
        """Bytes held by the BM25 index's arrays (postings, row lengths, cached scores), for memory benchmarks."""
        return self._require(index_name).lexical.nbytes

    async def search(
        self,
        index_name: str,
        vector: FloatVector,
        *,
        top_k: int,
        filters: FilterSpec | None = None,
    ) -> list[StoreHit]:
        index = self._require(index_name)
        validate_top_k(top_k)
        validated = validate_filters(filters)
        dims = index.spec.dimensions
        if dims is None:
            raise RagValidationError("This index has no embedding model; use lexical retrieval.")
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if not np.isfinite(query).all():
            raise RagValidationError("The query vector must be finite.")
        if query.shape[0] != dims:
            raise VectorDimensionMismatchError(index_name, dims, int(query.shape[0]))
        async with index.lock.read():
            if validated is not None and index.used > _INLINE_ROWS:  # $not, a first range: index-sized work
                candidates = await run_to_completion(functools.partial(self._filter_rows, index, validated))
            else:
                candidates = self._filter_rows(index, validated)
            if candidates is not None and candidates.size == 0:
                return []
            if index.live == 0:
                return []
            work = index.used if candidates is None else candidates.size
            if work <= _INLINE_ROWS:
                return self._search_sync(index, query, top_k, candidates)
            # Off the event loop; the read lock is held until the thread is done, even on cancellation.
            return await run_to_completion(functools.partial(self._search_sync, index, query, top_k, candidates))

    def _search_sync(
        self,
        index: _Index,
        query: npt.NDArray[np.float32],
        top_k: int,
        candidates: npt.NDArray[np.int64] | None,
    ) -> list[StoreHit]:
        metric = index.spec.metric
        if metric is DistanceMetric.COSINE:
            norm = float(np.linalg.norm(query))
            query = query / norm if norm > 0 else query
        matrix = index.matrix[: index.used] if candidates is None else index.matrix[candidates]
        scores = matrix @ query
        if metric is DistanceMetric.EUCLIDEAN:
            norms = index.sq_norms[: index.used] if candidates is None else index.sq_norms[candidates]
            scores = 2.0 * scores - norms  # larger is nearer; the constant |q|^2 is dropped
        if candidates is None and index.holes:
            scores[np.asarray(index.holes, dtype=np.int64)] = -np.inf
        live = index.live if candidates is None else candidates.size
        k = min(top_k, live)
        if k < scores.shape[0]:
            part = np.argpartition(scores, scores.shape[0] - k)[scores.shape[0] - k :]
            threshold = scores[part].min()
            picked = np.flatnonzero(scores >= threshold)  # keeps every tie at the boundary
        else:
            picked = np.flatnonzero(scores > -np.inf)
        rows = picked if candidates is None else candidates[picked]
        return self._exact_hits(index, query, rows, k)

    def _exact_hits(
        self, index: _Index, query: npt.NDArray[np.float32], rows: npt.NDArray[np.int64], k: int
    ) -> list[StoreHit]:
        metric = index.spec.metric
        vectors = index.matrix[rows].astype(np.float64)
        q = query.astype(np.float64)
        if metric is DistanceMetric.EUCLIDEAN:
            raws = np.sqrt(np.maximum(((vectors - q) ** 2).sum(axis=1), 0.0))
        else:
            raws = vectors @ q
        higher = scoring.higher_is_better(metric)
        order = sorted(
            range(len(rows)),
            key=lambda i: (-raws[i] if higher else raws[i], *self._row(index, int(rows[i])).key),
        )[:k]
        name = scoring.metric_name(metric)
        hits = []
        for i in order:
            row = self._row(index, int(rows[i]))
            raw = float(raws[i])
            hits.append(
                StoreHit(
                    document_id=row.key.document_id,
                    chunk_id=row.key.chunk_id,
                    content=row.content,
                    metadata=row.metadata,
                    raw_score=raw,
                    metric=name,
                    higher_is_better=higher,
                    relevance=scoring.relevance(metric, raw),
                )
            )
        return hits

    async def lexical_search(
        self,
        index_name: str,
        query: LexicalQuery,
        *,
        top_k: int,
        filters: FilterSpec | None = None,
    ) -> list[StoreHit]:
        index = self._require(index_name)
        validate_top_k(top_k)
        validated = validate_filters(filters)
        analysed = analyse_query(query, index.lexical.analyzer)
        if analysed.is_empty:
            return []
        async with index.lock.read():
            if index.used <= _INLINE_ROWS:
                return self._lexical_sync(index, analysed, top_k, validated)
            # Off the event loop; the read lock is held until the thread is done, even on cancellation.
            return await run_to_completion(functools.partial(self._lexical_sync, index, analysed, top_k, validated))

    def _lexical_sync(
        self, index: _Index, query: AnalysedQuery, top_k: int, filters: MetadataFilter | None
    ) -> list[StoreHit]:
        allowed = self._filter_rows(index, filters)
        if allowed is not None and allowed.size == 0:
            return []
        if query.phrases:
            scores = index.lexical.score_rows(query)
            pool = index.lexical.rows_with_all(query.phrase_terms)
            pool = pool if allowed is None else np.intersect1d(pool, allowed, assume_unique=True)
            ranked = self._ranked(index, score_groups(scores, pool), top_k, query.phrases)
        else:
            scores, candidates = index.lexical.top(query, top_k, allowed)
            ranked = self._ranked(index, score_groups(scores, candidates), top_k, ())
        hits = [self._lexical_hit(self._row(index, row), float(scores[row])) for row in ranked]
        if query.fragment is not None and len(hits) < top_k:
            hits += self._fragment_hits(index, query.fragment, top_k - len(hits), allowed, set(ranked))
        return hits

    def _ranked(
        self, index: _Index, groups: Iterable[list[int]], top_k: int, phrases: tuple[tuple[str, ...], ...]
    ) -> list[int]:
        """The first ``top_k`` rows by score, equal scores by ``(document_id, chunk_id)``, that hold every phrase."""
        chosen: list[int] = []
        for group in groups:
            if len(group) > 1:
                group.sort(key=lambda slot: self._row(index, slot).key)
            for slot in group:
                if not phrases or self._has_phrases(index, slot, phrases):
                    chosen.append(slot)
                    if len(chosen) == top_k:
                        return chosen
        return chosen

    def _has_phrases(self, index: _Index, slot: int, phrases: tuple[tuple[str, ...], ...]) -> bool:
        terms = index.lexical.analyzer.whole_terms(_indexed(self._row(index, slot)))
        return all(contains_phrase(terms, phrase) for phrase in phrases)

    def _fragment_hits(
        self, index: _Index, fragment: str, limit: int, allowed: npt.NDArray[np.int64] | None, found: set[int]
    ) -> list[StoreHit]:
        """Rows with a word containing the identifier fragment that BM25 did not return, by identity, score 0."""
        rows = index.lexical.rows_with_fragment(fragment)
        if allowed is not None:
            rows = np.intersect1d(rows, allowed, assume_unique=True)
        extra = sorted((self._row(index, slot) for slot in rows.tolist() if slot not in found), key=lambda r: r.key)
        return [self._lexical_hit(row, 0.0) for row in extra[:limit]]

    @staticmethod
    def _lexical_hit(row: _Row, score: float) -> StoreHit:
        return StoreHit(
            document_id=row.key.document_id,
            chunk_id=row.key.chunk_id,
            content=row.content,
            metadata=row.metadata,
            raw_score=score,
            metric=scoring.LEXICAL_BM25,
            higher_is_better=True,
            relevance=None,
        )

    # -- helpers -----------------------------------------------------------------------------

    def _require(self, index_name: str) -> _Index:
        index = self._indexes.get(index_name)
        if index is None:
            raise VectorIndexNotFoundError(index_name)
        return index

    @staticmethod
    def _row(index: _Index, slot: int) -> _Row:
        row = index.rows[slot]
        assert row is not None  # holes are masked before this point
        return row

    @staticmethod
    def _filter_rows(index: _Index, filters: MetadataFilter | None) -> npt.NDArray[np.int64] | None:
        if filters is None:
            return None
        live = (slot for slot, row in enumerate(index.rows) if row is not None)
        rows = index.by_metadata.rows(filters.root, live, lambda slot: InMemoryVectorStore._row(index, slot).metadata)
        return np.fromiter(sorted(rows), dtype=np.int64, count=len(rows))
