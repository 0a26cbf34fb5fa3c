"""BM25 in SQL ranks and scores exactly like the in-memory BM25 index, and stays right incrementally."""

from __future__ import annotations

import random

import asyncpg
import numpy as np
import pytest

from runiq.rag.providers import IndexSpec, InMemoryVectorStore, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresVectorStore

WORDS = ["remote", "work", "policy", "travel", "expense", "receipt", "retrieval", "hybrid", "index", "the", "of"]
IDENTIFIERS = ["POL-HR-014", "IRagRetriever", "filename.cs", "CS1503", "snake_case_name", "v1.2.3"]
QUERIES = [
    "remote work policy",
    "the expense of travel",
    "POL-HR-014",
    "retriever index",
    '"remote work"',
    'policy "travel expense"',
    "cs1503 filename.cs hybrid",
]


def _corpus(seed: int, documents: int = 30) -> dict[str, list[str]]:
    rng = random.Random(seed)
    corpus = {}
    for d in range(documents):
        chunks = []
        for _ in range(rng.randint(1, 3)):
            words = [rng.choice(WORDS) for _ in range(rng.randint(3, 40))]
            if rng.random() < 0.4:
                words.insert(rng.randrange(len(words) + 1), rng.choice(IDENTIFIERS))
            chunks.append(" ".join(words))
        corpus[f"doc-{d:02d}"] = chunks
    return corpus


async def _load(store: object, name: str, corpus: dict[str, list[str]]) -> None:
    for doc_id, texts in corpus.items():
        vectors = np.ones((len(texts), 3), dtype=np.float32)
        await store.replace_document(  # type: ignore[attr-defined]
            name, StoredDocument(document_id=doc_id, content_hash=str(len(texts))), make_chunks(doc_id, texts), vectors
        )


async def _assert_same_ranking(pg: PostgresVectorStore, memory: InMemoryVectorStore, name: str) -> None:
    for text in QUERIES:
        query = parse_lexical_query(text)
        expected = await memory.lexical_search(name, query, top_k=50)
        actual = await pg.lexical_search(name, query, top_k=50)
        scores = {h.key: h.raw_score for h in expected}
        assert [h.key for h in actual] == sorted((h.key for h in expected), key=lambda k: (-round(scores[k], 9), k)), (
            text
        )
        for a, e in zip(actual, expected, strict=True):
            assert a.raw_score == pytest.approx(e.raw_score, rel=1e-9, abs=1e-12), text


async def test_scores_equal_the_in_memory_bm25(pg_store: PostgresVectorStore) -> None:
    """Same tokens, same statistics, same formula: identical order and scores."""
    memory = InMemoryVectorStore()
    spec = IndexSpec(name="bm25", dimensions=3, embedding_model="m")
    await pg_store.ensure_index(spec)
    await memory.ensure_index(spec)
    corpus = _corpus(1)
    await _load(pg_store, "bm25", corpus)
    await _load(memory, "bm25", corpus)
    await _assert_same_ranking(pg_store, memory, "bm25")


async def test_statistics_follow_replacements_and_deletions(pg_store: PostgresVectorStore, postgres_dsn: str) -> None:
    """After updates and deletes, df/N/avgdl equal a from-scratch recount and rankings still match."""
    memory = InMemoryVectorStore()
    spec = IndexSpec(name="bm25", dimensions=3, embedding_model="m")
    await pg_store.ensure_index(spec)
    await memory.ensure_index(spec)
    for store in (pg_store, memory):
        await _load(store, "bm25", _corpus(1))
        await _load(store, "bm25", dict(list(_corpus(2).items())[:15]))  # replaces half of the documents
        await store.delete_documents("bm25", ["doc-20", "doc-21", "doc-22"])
    await _assert_same_ranking(pg_store, memory, "bm25")

    index = await pg_store._require("bm25")
    s = f'"{pg_store.options.schema_name}"'
    conn = await asyncpg.connect(postgres_dsn)
    try:
        recount = await conn.fetch(
            f"SELECT t AS term, count(*) AS df FROM {index.sql.table}, unnest(tsvector_to_array(lexemes)) t GROUP BY t"
        )
        stats = await conn.fetch(index.sql.document_frequencies)
        totals = await conn.fetchrow(
            f"SELECT chunk_count, total_terms FROM {s}.indexes WHERE index_id = $1", index.index_id
        )
        actual = await conn.fetchrow(f"SELECT count(*) AS n, coalesce(sum(term_count), 0) AS t FROM {index.sql.table}")
    finally:
        await conn.close()
    assert {r["term"]: r["df"] for r in stats} == {r["term"]: r["df"] for r in recount}
    assert (totals["chunk_count"], totals["total_terms"]) == (actual["n"], actual["t"])
    assert await pg_store.count("bm25") == await memory.count("bm25")


async def test_lexical_candidates_come_from_the_gin_index(pg_store: PostgresVectorStore, postgres_dsn: str) -> None:
    """Candidate selection (``lexemes @@ tsquery``) is served by the lexemes GIN index."""
    await pg_store.ensure_index(IndexSpec(name="plan", dimensions=None))
    await pg_store.replace_documents(
        "plan",
        [
            (StoredDocument(document_id=f"d{i}", content_hash="h"), make_chunks(f"d{i}", [f"filler {i} x{i}"]), None)
            for i in range(2000)
        ],
    )
    index = await pg_store._require("plan")
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute("SET enable_seqscan = off")
        rows = await conn.fetch(
            f"EXPLAIN SELECT row_id FROM {index.sql.table} WHERE lexemes @@ $1::text::tsquery", "'x17'"
        )
        plan = "\n".join(row[0] for row in rows)
    finally:
        await conn.close()
    assert f"Bitmap Index Scan on chunks_{index.index_id}_lexemes" in plan


async def test_top_k_cuts_ties_by_identity_like_the_in_memory_store(pg_store: PostgresVectorStore) -> None:
    """Equal scores at the top-k boundary are decided by (document_id, chunk_id), before content is read."""
    memory = InMemoryVectorStore()
    corpus = {f"doc-{d:02d}": ["remote work policy", "travel expense receipt"] for d in range(12, 0, -1)}
    corpus["doc-99"] = ["remote remote work policy policy"]
    for store in (pg_store, memory):
        await store.ensure_index(IndexSpec(name="ties", dimensions=3, embedding_model="m"))
        await _load(store, "ties", corpus)
    query = parse_lexical_query("remote policy")
    for top_k in (1, 3, 7):
        expected = await memory.lexical_search("ties", query, top_k=top_k)
        actual = await pg_store.lexical_search("ties", query, top_k=top_k)
        assert [h.key for h in actual] == [h.key for h in expected]
        assert actual[0].document_id == "doc-99"
        assert [h.document_id for h in actual[1:]] == [f"doc-{d:02d}" for d in range(1, top_k)]
