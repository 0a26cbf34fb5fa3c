"""InMemoryVectorStore: storage growth, hole reuse, exact top-k, filters, metrics and bad inputs."""

from __future__ import annotations

import asyncio
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runiq.errors import SchemaMismatchError, VectorDimensionMismatchError, VectorIndexNotFoundError
from runiq.rag import RagValidationError
from runiq.rag._documents import chunk_id_for
from runiq.rag.providers import (
    DistanceMetric,
    IndexSpec,
    InMemoryVectorStore,
    RagChunk,
    StoredDocument,
    parse_lexical_query,
)


def _chunks(document_id: str, texts: list[str], **metadata: Any) -> list[RagChunk]:
    return [
        RagChunk(
            document_id=document_id,
            chunk_id=chunk_id_for(document_id, i),
            ordinal=i,
            content=text,
            start=0,
            end=len(text),
            metadata=metadata,
        )
        for i, text in enumerate(texts)
    ]


def _doc(document_id: str, content_hash: str = "h") -> StoredDocument:
    return StoredDocument(document_id=document_id, content_hash=content_hash)


def _v(*rows: list[float]) -> np.ndarray:
    return np.asarray(rows, dtype=np.float32)


async def _store(metric: DistanceMetric = DistanceMetric.COSINE, dims: int = 3) -> InMemoryVectorStore:
    store = InMemoryVectorStore()
    await store.ensure_index(IndexSpec(name="ix", dimensions=dims, metric=metric, embedding_model="m"))
    return store


async def _put(store: InMemoryVectorStore, document_id: str, vector: list[float], text: str = "", **meta: Any) -> None:
    await store.replace_document(
        "ix", _doc(document_id), _chunks(document_id, [text or document_id], **meta), _v(vector)
    )


# -- growth and memory -----------------------------------------------------------------------


async def test_single_document_upserts_grow_geometrically_not_per_insert() -> None:
    """2000 one-chunk upserts reallocate the matrix only a few dozen times (amortised growth)."""
    dims = 32
    store = await _store(dims=dims)
    rng = np.random.default_rng(0)
    sizes = []
    for i in range(2000):
        await store.replace_document("ix", _doc(f"d{i:04d}"), _chunks(f"d{i:04d}", ["x"]), rng.random((1, dims)))
        sizes.append(store.stored_vector_bytes("ix"))
    reallocations = len(set(sizes))
    assert reallocations < 60  # growth factor > 1: O(log n) copies, not O(n)
    assert sizes == sorted(sizes)
    assert await store.count("ix") == 2000


async def test_stored_vector_memory_is_close_to_raw_float32_bytes() -> None:
    """After many inserts, vector storage stays within 1.2x of the raw float32 bytes."""
    dims = 64
    store = await _store(dims=dims)
    rng = np.random.default_rng(1)
    for i in range(50):
        texts = [f"c{j}" for j in range(40)]
        await store.replace_document("ix", _doc(f"d{i}"), _chunks(f"d{i}", texts), rng.random((40, dims)))
    raw = 2000 * dims * 4
    assert raw <= store.stored_vector_bytes("ix") <= 1.2 * raw


async def test_deleted_rows_are_reused_without_growth() -> None:
    """Rows freed by deletes are reused by later inserts: no growth, correct count and results."""
    dims = 8
    store = await _store(dims=dims)
    rng = np.random.default_rng(2)
    for i in range(100):
        await store.replace_document("ix", _doc(f"old{i}"), _chunks(f"old{i}", ["x"]), rng.random((1, dims)))
    before = store.stored_vector_bytes("ix")
    assert await store.delete_documents("ix", [f"old{i}" for i in range(50)]) == 50
    for i in range(50):
        await store.replace_document("ix", _doc(f"new{i}"), _chunks(f"new{i}", ["x"]), rng.random((1, dims)))
    assert store.stored_vector_bytes("ix") == before
    assert await store.count("ix") == 100
    hits = await store.search("ix", np.ones(dims, dtype=np.float32), top_k=1000)
    ids = {h.document_id for h in hits}
    assert ids == {f"old{i}" for i in range(50, 100)} | {f"new{i}" for i in range(50)}


async def test_replacing_a_document_reuses_its_rows() -> None:
    """Re-writing the same document many times does not grow storage."""
    store = await _store()
    await _put(store, "d", [1, 0, 0])
    before = store.stored_vector_bytes("ix")
    for _ in range(500):
        await _put(store, "d", [0, 1, 0])
    assert store.stored_vector_bytes("ix") == before
    assert await store.count("ix") == 1


async def test_holes_never_appear_in_euclidean_results() -> None:
    """A deleted row (zeroed) is not returned even when the query is next to the origin."""
    store = await _store(DistanceMetric.EUCLIDEAN, dims=2)
    await _put(store, "gone", [0.1, 0.0])
    await _put(store, "far", [5.0, 5.0])
    await store.delete_documents("ix", ["gone"])
    hits = await store.search("ix", np.zeros(2, dtype=np.float32), top_k=5)
    assert [h.document_id for h in hits] == ["far"]


# -- exactness -------------------------------------------------------------------------------


def _brute_force(vectors: np.ndarray, query: np.ndarray, metric: DistanceMetric) -> np.ndarray:
    v, q = vectors.astype(np.float64), query.astype(np.float64)
    if metric is DistanceMetric.COSINE:
        norms = np.linalg.norm(v, axis=1) * np.linalg.norm(q)
        return np.divide(v @ q, norms, out=np.zeros(len(v)), where=norms > 0)
    if metric is DistanceMetric.EUCLIDEAN:
        return np.sqrt(((v - q) ** 2).sum(axis=1))
    return v @ q


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    metric=st.sampled_from(list(DistanceMetric)),
    n=st.integers(min_value=1, max_value=60),
    deleted=st.integers(min_value=0, max_value=20),
    top_k=st.integers(min_value=1, max_value=30),
    seed=st.integers(min_value=0, max_value=2**16),
    filtered=st.booleans(),
)
def test_search_equals_brute_force(
    metric: DistanceMetric, n: int, deleted: int, top_k: int, seed: int, filtered: bool
) -> None:
    """Top-k ids and raw scores equal an exact float64 brute force, with deletes and filters."""
    rng = np.random.default_rng(seed)
    dims = 6
    vectors = rng.normal(size=(n, dims)).astype(np.float32)
    query = rng.normal(size=dims).astype(np.float32)
    groups = rng.integers(0, 2, size=n)

    async def scenario() -> list[Any]:
        store = await _store(metric, dims)
        for i in range(n):
            chunks = _chunks(f"d{i:03d}", ["x"], group=int(groups[i]))
            await store.replace_document("ix", _doc(f"d{i:03d}"), chunks, vectors[i : i + 1])
        await store.delete_documents("ix", [f"d{i:03d}" for i in range(min(deleted, n))])
        return await store.search("ix", query, top_k=top_k, filters={"group": 1} if filtered else None)

    hits = asyncio.run(scenario())
    live = [i for i in range(min(deleted, n), n) if not filtered or groups[i] == 1]
    raws = _brute_force(vectors[live], query, metric) if live else np.empty(0)
    higher = metric is not DistanceMetric.EUCLIDEAN
    expected = sorted(zip(live, raws, strict=True), key=lambda p: (-p[1] if higher else p[1], p[0]))[:top_k]
    assert len(hits) == len(expected)
    for hit, (_, raw) in zip(hits, expected, strict=True):
        assert hit.raw_score == pytest.approx(raw, rel=1e-4, abs=1e-4)
    got = [h.raw_score for h in hits]
    assert got == sorted(got, reverse=higher)
    # identities may only differ where scores tie within float32 noise
    for hit, (i, raw) in zip(hits, expected, strict=True):
        if hit.document_id != f"d{i:03d}":
            assert hit.raw_score == pytest.approx(raw, abs=1e-5)


async def test_large_index_search_is_exact() -> None:
    """Above the inline threshold (thread-pool path), top-10 still equals the brute force."""
    rng = np.random.default_rng(3)
    dims, n = 16, 5000
    vectors = rng.normal(size=(n, dims)).astype(np.float32)
    store = await _store(dims=dims)
    for start in range(0, n, 500):
        chunk_texts = [f"c{j}" for j in range(500)]
        await store.replace_document(
            "ix", _doc(f"block{start:05d}"), _chunks(f"block{start:05d}", chunk_texts), vectors[start : start + 500]
        )
    query = rng.normal(size=dims).astype(np.float32)
    hits = await store.search("ix", query, top_k=10)
    expected = np.argsort(-_brute_force(vectors, query, DistanceMetric.COSINE))[:10]
    assert [(h.document_id, h.chunk_id) for h in hits] == [
        (f"block{(i // 500) * 500:05d}", f"block{(i // 500) * 500:05d}#{i % 500}") for i in expected
    ]


async def test_ties_are_broken_by_document_then_chunk_id_at_the_cut() -> None:
    """Equal scores are ordered by (document_id, chunk_id), also across the top-k boundary."""
    store = await _store()
    for doc in ["c", "a", "d", "b"]:
        await store.replace_document("ix", _doc(doc), _chunks(doc, ["x", "y"]), _v([1, 0, 0], [1, 0, 0]))
    hits = await store.search("ix", np.array([1, 0, 0], dtype=np.float32), top_k=3)
    assert [(h.document_id, h.chunk_id) for h in hits] == [("a", "a#0"), ("a", "a#1"), ("b", "b#0")]


# -- score semantics -------------------------------------------------------------------------


async def test_cosine_ignores_vector_length_and_zero_vectors_score_zero() -> None:
    """Cosine compares directions: a scaled vector scores 1; a zero vector scores 0 (relevance 0.5)."""
    store = await _store()
    await _put(store, "scaled", [10, 0, 0])
    await _put(store, "zero", [0, 0, 0])
    hits = await store.search("ix", np.array([0.5, 0, 0], dtype=np.float32), top_k=5)
    by_id = {h.document_id: h for h in hits}
    assert by_id["scaled"].raw_score == pytest.approx(1.0)
    assert by_id["zero"].raw_score == pytest.approx(0.0)
    assert by_id["zero"].relevance == pytest.approx(0.5)
    zero_query = await store.search("ix", np.zeros(3, dtype=np.float32), top_k=5)
    assert all(h.raw_score == pytest.approx(0.0) for h in zero_query)


async def test_cosine_opposite_vector_has_relevance_zero() -> None:
    """An opposite direction has raw -1 and relevance 0, and ranks last."""
    store = await _store()
    await _put(store, "same", [1, 0, 0])
    await _put(store, "opposite", [-1, 0, 0])
    hits = await store.search("ix", np.array([1, 0, 0], dtype=np.float32), top_k=5)
    assert [h.document_id for h in hits] == ["same", "opposite"]
    assert hits[1].raw_score == pytest.approx(-1.0)
    assert hits[1].relevance == pytest.approx(0.0)


async def test_euclidean_distance_and_relevance() -> None:
    """Euclidean raw is the distance (lower first) and relevance 1 / (1 + distance)."""
    store = await _store(DistanceMetric.EUCLIDEAN)
    await _put(store, "near", [1, 1, 0])
    await _put(store, "far", [4, 5, 0])
    hits = await store.search("ix", np.array([1, 1, 0], dtype=np.float32), top_k=5)
    assert [h.document_id for h in hits] == ["near", "far"]
    assert hits[1].raw_score == pytest.approx(5.0)
    assert hits[1].relevance == pytest.approx(1 / 6)
    assert hits[0].relevance == pytest.approx(1.0)
    assert all(h.metric == "euclidean-distance" and not h.higher_is_better for h in hits)


async def test_dot_product_is_unnormalised_with_no_relevance() -> None:
    """Dot product keeps vector length: the longer aligned vector wins, relevance None."""
    store = await _store(DistanceMetric.DOT_PRODUCT)
    await _put(store, "short", [1, 0, 0])
    await _put(store, "long", [3, 0, 0])
    hits = await store.search("ix", np.array([2, 0, 0], dtype=np.float32), top_k=5)
    assert [(h.document_id, h.raw_score) for h in hits] == [("long", pytest.approx(6.0)), ("short", pytest.approx(2.0))]
    assert all(h.relevance is None and h.higher_is_better and h.metric == "dot-product" for h in hits)


# -- filters ---------------------------------------------------------------------------------


async def _filter_store() -> InMemoryVectorStore:
    store = await _store()
    await _put(store, "best", [1, 0, 0], team="hr", year=2024)
    await _put(store, "hr-old", [0.8, 0.6, 0], team="hr", year=2023)
    await _put(store, "eng", [0.9, 0.1, 0], team="eng", year=2024)
    await _put(store, "plain", [0.7, 0.7, 0])
    await _put(store, "flag", [0.5, 0.5, 0.5], draft=True, count=1)
    return store


async def test_filters_are_and_combined_equality() -> None:
    """Every filter pair must match; a chunk matching only some pairs is excluded."""
    store = await _filter_store()
    q = np.array([1, 0, 0], dtype=np.float32)
    assert [h.document_id for h in await store.search("ix", q, top_k=5, filters={"team": "hr"})] == ["best", "hr-old"]
    assert [h.document_id for h in await store.search("ix", q, top_k=5, filters={"team": "hr", "year": 2023})] == [
        "hr-old"
    ]
    assert await store.search("ix", q, top_k=5, filters={"team": "hr", "year": 1999}) == []


async def test_filters_apply_before_top_k() -> None:
    """The best overall chunk filtered out: top_k=1 returns the best of the matching subset."""
    store = await _filter_store()
    hits = await store.search("ix", np.array([1, 0, 0], dtype=np.float32), top_k=1, filters={"team": "eng"})
    assert [h.document_id for h in hits] == ["eng"]


async def test_missing_key_never_matches_and_values_are_type_exact() -> None:
    """A chunk without the key never matches; True does not match 1, and '2024' does not match 2024."""
    store = await _filter_store()
    q = np.array([1, 0, 0], dtype=np.float32)
    assert await store.search("ix", q, top_k=5, filters={"missing": "x"}) == []
    assert [h.document_id for h in await store.search("ix", q, top_k=5, filters={"draft": True})] == ["flag"]
    assert await store.search("ix", q, top_k=5, filters={"draft": 1}) == []
    assert await store.search("ix", q, top_k=5, filters={"count": True}) == []
    assert await store.search("ix", q, top_k=5, filters={"year": "2024"}) == []


async def test_empty_filter_means_no_filtering() -> None:
    """An empty filter mapping returns the same as no filter."""
    store = await _filter_store()
    q = np.array([1, 0, 0], dtype=np.float32)
    assert await store.search("ix", q, top_k=10, filters={}) == await store.search("ix", q, top_k=10)


async def test_filters_forget_deleted_and_replaced_chunks() -> None:
    """After a delete or a replace with new metadata, old metadata no longer matches."""
    store = await _filter_store()
    q = np.array([1, 0, 0], dtype=np.float32)
    await store.delete_documents("ix", ["best"])
    await _put(store, "hr-old", [0.8, 0.6, 0], team="finance")
    assert await store.search("ix", q, top_k=5, filters={"team": "hr"}) == []
    assert [h.document_id for h in await store.search("ix", q, top_k=5, filters={"team": "finance"})] == ["hr-old"]


async def test_lexical_search_honours_filters() -> None:
    """Lexical results are restricted by the same metadata filters."""
    store = await _store()
    await _put(store, "hr", [1, 0, 0], "remote work policy", team="hr")
    await _put(store, "eng", [1, 0, 0], "remote build policy", team="eng")
    query = parse_lexical_query("remote policy")
    assert {h.document_id for h in await store.lexical_search("ix", query, top_k=5)} == {"hr", "eng"}
    hits = await store.lexical_search("ix", query, top_k=5, filters={"team": "eng"})
    assert [h.document_id for h in hits] == ["eng"]


# -- writes, reads and bad inputs ------------------------------------------------------------


async def test_replace_document_drops_stale_chunks_and_keeps_others() -> None:
    """A shorter new version removes the old extra chunks; other documents are untouched."""
    store = await _store()
    await store.replace_document(
        "ix", _doc("a", "h1"), _chunks("a", ["a0", "a1", "a2"]), _v([1, 0, 0], [0, 1, 0], [0, 0, 1])
    )
    await _put(store, "b", [1, 1, 1])
    await store.replace_document("ix", _doc("a", "h2"), _chunks("a", ["A0"]), _v([1, 0, 0]))
    hits = await store.search("ix", np.ones(3, dtype=np.float32), top_k=10)
    assert sorted((h.chunk_id, h.content) for h in hits) == [("a#0", "A0"), ("b#0", "b")]
    assert dict(await store.document_hashes("ix")) == {"a": "h2", "b": "h"}
    assert await store.count("ix") == 2


async def test_document_with_no_chunks_is_recorded_without_rows() -> None:
    """A document whose new version has no chunks keeps its hash and loses its old chunks."""
    store = await _store()
    await _put(store, "a", [1, 0, 0])
    await store.replace_document("ix", _doc("a", "empty"), [], np.empty((0, 3), dtype=np.float32))
    assert await store.count("ix") == 0
    assert dict(await store.document_hashes("ix")) == {"a": "empty"}


async def test_delete_reports_documents_that_existed() -> None:
    """delete_documents returns how many of the ids existed; unknown ids and indexes are no-ops."""
    store = await _store()
    await _put(store, "a", [1, 0, 0])
    await _put(store, "b", [0, 1, 0])
    assert await store.delete_documents("ix", ["a", "missing", "a"]) == 1
    assert await store.delete_documents("ix", []) == 0
    assert await store.delete_documents("never-created", ["a"]) == 0
    assert dict(await store.document_hashes("ix")) == {"b": "h"}


async def test_unknown_index_reads() -> None:
    """count, document_count and document_hashes of an unknown index are empty; search raises
    VectorIndexNotFoundError."""
    store = InMemoryVectorStore()
    assert await store.count("nope") == 0
    assert await store.document_count("nope") == 0
    assert dict(await store.document_hashes("nope")) == {}
    with pytest.raises(VectorIndexNotFoundError):
        await store.search("nope", np.zeros(3, dtype=np.float32), top_k=1)
    with pytest.raises(VectorIndexNotFoundError):
        await store.lexical_search("nope", parse_lexical_query("x"), top_k=1)
    with pytest.raises(VectorIndexNotFoundError):
        await store.replace_document("nope", _doc("a"), _chunks("a", ["x"]), _v([1, 0, 0]))


async def test_ensure_index_refuses_another_metric() -> None:
    """An existing index with another metric is a SchemaMismatchError (the first metric does not silently win)."""
    store = await _store(DistanceMetric.COSINE)
    with pytest.raises(SchemaMismatchError):
        await store.ensure_index(
            IndexSpec(name="ix", dimensions=3, metric=DistanceMetric.EUCLIDEAN, embedding_model="m")
        )


@pytest.mark.parametrize(
    ("vectors", "error"),
    [
        (None, RagValidationError),
        (np.ones((2, 3), dtype=np.float32), RagValidationError),
        (np.ones(3, dtype=np.float32), RagValidationError),
        (np.ones((1, 4), dtype=np.float32), VectorDimensionMismatchError),
        (np.array([[np.nan, 0, 0]], dtype=np.float32), RagValidationError),
        (np.array([[np.inf, 0, 0]], dtype=np.float32), RagValidationError),
    ],
    ids=["missing", "row-count", "one-dimensional", "dimension", "nan", "inf"],
)
async def test_bad_vectors_are_rejected_and_nothing_is_written(vectors: Any, error: type[Exception]) -> None:
    """Missing, mis-shaped or non-finite vectors raise before any write; the old version stays."""
    store = await _store()
    await _put(store, "a", [1, 0, 0])
    with pytest.raises(error):
        await store.replace_document("ix", _doc("a", "h2"), _chunks("a", ["new"]), vectors)
    hits = await store.search("ix", np.array([1, 0, 0], dtype=np.float32), top_k=5)
    assert [(h.chunk_id, h.content) for h in hits] == [("a#0", "a")]
    assert dict(await store.document_hashes("ix")) == {"a": "h"}


@pytest.mark.parametrize("top_k", [0, -3])
async def test_top_k_must_be_positive(top_k: int) -> None:
    """Non-positive top_k is a RagValidationError for vector and lexical search."""
    store = await _store()
    with pytest.raises(RagValidationError):
        await store.search("ix", np.zeros(3, dtype=np.float32), top_k=top_k)
    with pytest.raises(RagValidationError):
        await store.lexical_search("ix", parse_lexical_query("x"), top_k=top_k)


async def test_query_dimension_must_match() -> None:
    """A query vector of another length is a VectorDimensionMismatchError."""
    store = await _store()
    await _put(store, "a", [1, 0, 0])
    with pytest.raises(VectorDimensionMismatchError):
        await store.search("ix", np.zeros(4, dtype=np.float32), top_k=1)


async def test_lexical_only_index_stores_chunks_without_vectors() -> None:
    """An index without dimensions stores chunks for lexical search and refuses vector search."""
    store = InMemoryVectorStore()
    await store.ensure_index(IndexSpec(name="lex", dimensions=None))
    await store.replace_document("lex", _doc("a"), _chunks("a", ["error CS1503 here"]), None)
    hits = await store.lexical_search("lex", parse_lexical_query("CS1503"), top_k=5)
    assert [h.document_id for h in hits] == ["a"]
    with pytest.raises(RagValidationError):
        await store.search("lex", np.zeros(3, dtype=np.float32), top_k=1)


async def test_empty_index_search_returns_nothing() -> None:
    """Searching an index with no chunks is an empty success."""
    store = await _store()
    assert await store.search("ix", np.ones(3, dtype=np.float32), top_k=5) == []
    assert await store.lexical_search("ix", parse_lexical_query("x"), top_k=5) == []


async def test_indexes_are_isolated() -> None:
    """The same document id in two indexes is two documents."""
    store = await _store()
    await store.ensure_index(IndexSpec(name="other", dimensions=3, embedding_model="m"))
    await _put(store, "a", [1, 0, 0], "first")
    await store.replace_document("other", _doc("a"), _chunks("a", ["second"]), _v([1, 0, 0]))
    await store.delete_documents("ix", ["a"])
    assert [h.content for h in await store.search("other", np.ones(3, dtype=np.float32), top_k=5)] == ["second"]
    assert await store.count("ix") == 0
