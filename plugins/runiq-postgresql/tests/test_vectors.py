"""HNSW lifecycle and search paths, lexical-only indexes, and the bulk COPY path."""

from __future__ import annotations

import dataclasses

import asyncpg
import numpy as np
import pytest

from runiq.errors import VectorDimensionMismatchError
from runiq.rag import RagValidationError
from runiq.rag._documents import RagChunk
from runiq.rag.providers import DistanceMetric, IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore


def _clustered(n: int, dims: int, seed: int = 7) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(8, dims))
    return (centres[rng.integers(0, 8, n)] + 0.3 * rng.normal(size=(n, dims))).astype(np.float32)


def _items(vectors: np.ndarray, prefix: str = "d") -> list[tuple[StoredDocument, list[RagChunk], np.ndarray]]:
    items = []
    for i, vector in enumerate(vectors):
        doc = f"{prefix}{i:04d}"
        chunk = make_chunks(doc, [f"chunk {i} group{i % 10}"])[0]
        chunk = dataclasses.replace(chunk, metadata={"group": i % 10})
        items.append((StoredDocument(document_id=doc, content_hash="h"), [chunk], vector[None, :]))
    return items


def _exact_top(vectors: np.ndarray, query: np.ndarray, metric: DistanceMetric, k: int) -> list[str]:
    ids = [f"d{i:04d}" if i < 200 else f"e{i - 200:04d}" for i in range(len(vectors))]
    if metric is DistanceMetric.EUCLIDEAN:
        order = np.argsort(np.linalg.norm(vectors - query, axis=1))
    else:
        matrix = vectors
        if metric is DistanceMetric.COSINE:
            matrix = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        order = np.argsort(-(matrix @ query))
    return [ids[i] for i in order[:k]]


async def _index_names(dsn: str, schema: str) -> set[str]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT indexname FROM pg_indexes WHERE schemaname = $1", schema)
    finally:
        await conn.close()
    return {row["indexname"] for row in rows}


@pytest.mark.parametrize("metric", list(DistanceMetric))
async def test_hnsw_is_built_at_the_threshold_and_agrees_with_exact_search(
    options: PostgresStoreOptions, postgres_dsn: str, metric: DistanceMetric
) -> None:
    """Below ann_min_rows the index is scanned exactly; at the threshold HNSW is built and still finds the nearest."""
    vectors = _clustered(400, 16)
    async with PostgresVectorStore(options.model_copy(update={"ann_min_rows": 300})) as store:
        await store.ensure_index(IndexSpec(name="v", dimensions=16, metric=metric, embedding_model="m"))
        await store.replace_documents("v", _items(vectors[:200]))
        exact = await store.search("v", vectors[5], top_k=10)
        assert not (await store._require("v")).ann
        await store.replace_documents("v", _items(vectors[200:], prefix="e"))
        index = await store._require("v")
        assert index.ann
        assert f"chunks_{index.index_id}_hnsw" in await _index_names(postgres_dsn, options.schema_name)
        approximate = await store.search("v", vectors[5], top_k=10)
        truth = _exact_top(vectors, vectors[5], metric, 10)
        assert approximate[0].document_id == truth[0]
        assert len({h.document_id for h in approximate} & set(truth)) >= 9
        assert len(exact) == 10
        assert [h.raw_score for h in approximate] == sorted(
            (h.raw_score for h in approximate), reverse=metric is not DistanceMetric.EUCLIDEAN
        )


async def test_filtered_hnsw_search_does_not_under_return(options: PostgresStoreOptions) -> None:
    """With a selective filter, iterative scans still return top_k matching chunks."""
    vectors = _clustered(1000, 8)
    async with PostgresVectorStore(options.model_copy(update={"ann_min_rows": 0})) as store:
        await store.ensure_index(IndexSpec(name="v", dimensions=8, embedding_model="m"))
        await store.replace_documents("v", _items(vectors))
        hits = await store.search("v", vectors[0], top_k=20, filters={"group": 3})
        assert len(hits) == 20
        assert all(h.metadata["group"] == 3 for h in hits)


async def test_high_dimensional_index_uses_halfvec_hnsw(options: PostgresStoreOptions, postgres_dsn: str) -> None:
    """Above 2,000 dimensions HNSW indexes a halfvec cast; scores are still computed at full precision."""
    vectors = _clustered(20, 2048)
    async with PostgresVectorStore(options.model_copy(update={"ann_min_rows": 0})) as store:
        await store.ensure_index(IndexSpec(name="big", dimensions=2048, embedding_model="m"))
        await store.replace_documents("big", _items(vectors))
        hits = await store.search("big", vectors[3], top_k=3)
        assert hits[0].document_id == "d0003"
        assert hits[0].raw_score == pytest.approx(1.0, abs=1e-5)


async def test_lexical_only_index_has_no_vectors(pg_store: PostgresVectorStore) -> None:
    """An index without an embedding model stores no vectors, searches lexically, refuses vector search."""
    await pg_store.ensure_index(IndexSpec(name="lex", dimensions=None))
    await pg_store.replace_document(
        "lex", StoredDocument(document_id="d1", content_hash="h"), make_chunks("d1", ["Error CS1503"]), None
    )
    hits = await pg_store.lexical_search("lex", parse_lexical_query("cs1503"), top_k=3)
    assert [h.document_id for h in hits] == ["d1"]
    with pytest.raises(RagValidationError):
        await pg_store.search("lex", np.zeros(3, dtype=np.float32), top_k=3)


async def test_one_document_at_a_time_and_in_bulk_store_the_same_thing(options: PostgresStoreOptions) -> None:
    """replace_document per document and replace_documents for many (one transaction) give identical results."""
    vectors = _clustered(60, 8)
    async with PostgresVectorStore(options) as store:
        for name in ("rows", "bulk"):
            await store.ensure_index(IndexSpec(name=name, dimensions=8, embedding_model="m"))
        for doc, chunks, vecs in _items(vectors):
            await store.replace_document("rows", doc, chunks, vecs)
        await store.replace_documents("bulk", _items(vectors))
        await store.replace_documents("bulk", _items(vectors[:30]))  # replacing existing documents in bulk
        for name in ("rows", "bulk"):
            assert await store.count(name) == 60
        semantic = [await store.search(n, vectors[9], top_k=5, filters={"group": 9}) for n in ("rows", "bulk")]
        assert [h.key for h in semantic[0]] == [h.key for h in semantic[1]]
        query = parse_lexical_query("group4 chunk")
        lexical = [await store.lexical_search(n, query, top_k=10) for n in ("rows", "bulk")]
        assert [(h.key, round(h.raw_score, 9)) for h in lexical[0]] == [
            (h.key, round(h.raw_score, 9)) for h in lexical[1]
        ]


async def test_bad_writes_are_rejected_before_the_database(pg_store: PostgresVectorStore) -> None:
    """Duplicate chunk ids, NaN vectors, missing vectors and NaN metadata are typed validation errors."""
    await pg_store.ensure_index(IndexSpec(name="v", dimensions=3, embedding_model="m"))
    doc = StoredDocument(document_id="d1", content_hash="h")
    chunk = make_chunks("d1", ["a"])[0]
    with pytest.raises(RagValidationError):
        await pg_store.replace_document("v", doc, [chunk, chunk], np.eye(2, 3))
    with pytest.raises(RagValidationError):
        await pg_store.replace_document("v", doc, [chunk], np.array([[np.nan, 0, 0]]))
    with pytest.raises(RagValidationError):
        await pg_store.replace_document("v", doc, [chunk], None)
    with pytest.raises(RagValidationError):
        await pg_store.replace_document(
            "v", StoredDocument(document_id="d1", content_hash="h", metadata={"x": float("nan")}), [chunk], np.eye(1, 3)
        )
    with pytest.raises(RagValidationError):
        await pg_store.replace_documents("v", [(doc, [chunk], np.eye(1, 3)), (doc, [chunk], np.eye(1, 3))])
    assert await pg_store.count("v") == 0


async def test_nul_characters_in_content_are_stored_safely(pg_store: PostgresVectorStore) -> None:
    """PostgreSQL text cannot hold NUL; content keeps a replacement character instead of failing."""
    await pg_store.ensure_index(IndexSpec(name="v", dimensions=None))
    chunk = make_chunks("d1", ["before\x00after CS1503"])[0]
    await pg_store.replace_document("v", StoredDocument(document_id="d1", content_hash="h"), [chunk], None)
    hits = await pg_store.lexical_search("v", parse_lexical_query("CS1503"), top_k=1)
    assert hits[0].content == "before\ufffdafter CS1503"


async def test_bulk_load_rebuilds_indexes_and_builds_hnsw_at_the_end(
    options: PostgresStoreOptions, postgres_dsn: str
) -> None:
    """Inside bulk_load the GIN indexes are gone; on exit they, and HNSW past the threshold, exist."""
    vectors = _clustered(300, 8)
    async with PostgresVectorStore(options.model_copy(update={"ann_min_rows": 100})) as store:
        await store.ensure_index(IndexSpec(name="load", dimensions=8, embedding_model="m"))
        index = await store._require("load")
        table = f"chunks_{index.index_id}"
        async with store.bulk_load("load"):
            await store.replace_documents("load", _items(vectors[:150]))
            await store.replace_documents("load", _items(vectors[150:], prefix="e"))
            assert f"{table}_lexemes" not in await _index_names(postgres_dsn, options.schema_name)
            assert not index.ann
        names = await _index_names(postgres_dsn, options.schema_name)
        assert {f"{table}_lexemes", f"{table}_trgm", f"{table}_metadata", f"{table}_hnsw"} <= names
        assert index.ann
        assert await store.count("load") == 300
        hits = await store.lexical_search("load", parse_lexical_query('"group3"'), top_k=50)
        assert len(hits) == 30


async def test_a_bulk_replace_is_one_atomic_write(options: PostgresStoreOptions, postgres_dsn: str) -> None:
    """Every document of a batch lands, or none does when one item is bad; statistics stay exact."""
    vectors = _clustered(150, 4)
    async with PostgresVectorStore(options) as store:
        await store.ensure_index(IndexSpec(name="s", dimensions=4))
        await store.replace_documents("s", _items(vectors))
        assert await store.count("s") == 150
        broken = _items(vectors, prefix="x")
        broken[-1] = (broken[-1][0], broken[-1][1], np.ones((1, 5), dtype=np.float32))  # wrong dimension, last item
        with pytest.raises(VectorDimensionMismatchError):
            await store.replace_documents("s", broken)
        assert await store.count("s") == 150
        index = await store._require("s")
    conn = await asyncpg.connect(postgres_dsn)
    try:
        s = f'"{options.schema_name}"'
        totals = await conn.fetchrow(f"SELECT chunk_count, total_terms FROM {s}.indexes WHERE index_id = $1", 1)
        actual = await conn.fetchrow(f"SELECT count(*) AS n, sum(term_count) AS t FROM {index.sql.table}")
        docs = await conn.fetchval(f"SELECT count(*) FROM {s}.documents")
    finally:
        await conn.close()
    assert (totals["chunk_count"], totals["total_terms"]) == (actual["n"], actual["t"])
    assert docs == 150
