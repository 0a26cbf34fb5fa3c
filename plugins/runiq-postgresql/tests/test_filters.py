"""The filter language in the PostgreSQL store: the contract kit on every search path, and the SQL it sends.

``MetadataFilterContract`` runs against exact scans and against HNSW; the tests below add what the
contract cannot see: phrase and identifier-fragment lexical queries, the HNSW fallback when the
iterative scan stops early, the statements (one per filter shape, precomputed when unfiltered, every
key and value a parameter, GIN for equality) and the tenant scope through the retriever.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np
import pytest

import runiq_postgresql.plugin
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    RagDocument,
    RagIngestionManager,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    StaticRetrievalScope,
    add_runiq_rag,
)
from runiq.rag._stores.filters import MAX_FILTER_CONDITIONS, matches, parse_filter
from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import CANARY, MetadataFilterContract, make_chunks
from runiq.rag.testing.filter_cases import FILTER_CASES, FILTER_ROWS, INJECTION_KEY
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStorage, PostgresVectorStore


class TestPostgresFilters(MetadataFilterContract):
    """Every operator case, the random agreement test, the scope and the hostile filters: exact scans."""

    @pytest.fixture
    async def store(self, options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with PostgresVectorStore(options) as store:
            yield store


class TestPostgresFiltersHnsw(MetadataFilterContract):
    """The same through HNSW's filtered iterative scan (index built when the logical index is created)."""

    @pytest.fixture
    async def store(self, options: PostgresStoreOptions, through_the_graph: None) -> AsyncIterator[PostgresVectorStore]:
        async with PostgresVectorStore(options.model_copy(update={"ann_min_rows": 0})) as store:
            yield store


_VECTOR = np.array([1, 0, 0], dtype=np.float32)


def _expected(filters: dict[str, Any]) -> list[str]:
    node = parse_filter(filters)
    assert node is not None
    return [f"d#{i}" for i, row in enumerate(FILTER_ROWS) if matches(node, row)]


async def _rows_index(store: PostgresVectorStore, content: str) -> str:
    """``FILTER_ROWS`` as chunks ``d#i`` that all hold ``content``."""
    await store.ensure_index(IndexSpec(name="rows", dimensions=3, embedding_model="m"))
    chunks = [
        dataclasses.replace(chunk, metadata=FILTER_ROWS[i])
        for i, chunk in enumerate(make_chunks("d", [content] * len(FILTER_ROWS)))
    ]
    vectors = np.tile(_VECTOR, (len(chunks), 1))
    await store.replace_document("rows", StoredDocument(document_id="d", content_hash="h"), chunks, vectors)
    return "rows"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param('"remote work"', id="phrase"),
        pytest.param("HR-01", id="identifier-fragment"),
        pytest.param("remote POL-HR-014", id="free-text-and-identifier"),
    ],
)
async def test_phrase_and_fragment_queries_filter_like_the_reference(pg_store: PostgresVectorStore, text: str) -> None:
    """The phrase statement, the trigram fallback and the BM25 candidates each apply every contract case."""
    name = await _rows_index(pg_store, "remote work policy POL-HR-014")
    query = parse_lexical_query(text)
    for _, filters, _ in FILTER_CASES:
        hits = await pg_store.lexical_search(name, query, top_k=20, filters=filters)
        assert sorted(hit.chunk_id for hit in hits) == _expected(filters), filters


async def test_a_filtered_hnsw_search_that_finds_fewer_than_k_is_answered_by_an_exact_scan(
    options: PostgresStoreOptions, monkeypatch: pytest.MonkeyPatch, through_the_graph: None
) -> None:
    """The iterative scan gives up after ``hnsw.max_scan_tuples`` visits, so fewer than k hits may
    mean that it stopped early: the exact scan then answers (here three chunks pass at all)."""
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(400, 8)).astype(np.float32)
    async with PostgresVectorStore(options.model_copy(update={"ann_min_rows": 0})) as store:
        await store.ensure_index(IndexSpec(name="v", dimensions=8))
        chunks = [dataclasses.replace(c, metadata={"n": i}) for i, c in enumerate(make_chunks("d", ["x"] * 400))]
        await store.replace_document("v", StoredDocument(document_id="d", content_hash="h"), chunks, vectors)
        recorder = _Recorder(monkeypatch)
        hits = await store.search("v", vectors[0], top_k=5, filters={"n": {"$gte": 397}})
        assert [sql.split()[0] for sql, _ in recorder.take()] == ["WITH", "SELECT"]  # HNSW, then the exact scan
        assert [hit.chunk_id for hit in hits] == _nearest(vectors, vectors[0], [397, 398, 399], 5)
        hits = await store.search("v", vectors[0], top_k=5, filters={"n": {"$gte": 200}})
        assert [sql.split()[0] for sql, _ in recorder.take()] == ["WITH"]  # k found: no second scan


def _nearest(vectors: np.ndarray, query: np.ndarray, allowed: list[int], k: int) -> list[str]:
    """The exact cosine top k among ``allowed`` rows, as chunk ids."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    sims = unit[allowed] @ (query / np.linalg.norm(query))
    return [f"d#{allowed[i]}" for i in np.argsort(-sims, kind="stable")[:k]]


async def test_ranges_and_equality_through_hnsw_return_the_exact_top_k(
    options: PostgresStoreOptions, through_the_graph: None
) -> None:
    """A 1% and a 50% range, a date range and an equality with a list on 2,000 chunks: HNSW's
    filtered iterative scan finds the exact filtered top k."""
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(2000, 16)).astype(np.float32)
    metadata = [
        {"n": i, "day": f"2024-{1 + i % 12:02d}-{1 + i % 28:02d}", "team": f"t{i % 50}", "tags": [f"g{i % 7}"]}
        for i in range(2000)
    ]
    chunks = [dataclasses.replace(c, metadata=metadata[i]) for i, c in enumerate(make_chunks("d", ["x"] * 2000))]
    async with PostgresVectorStore(options.model_copy(update={"ann_min_rows": 0})) as store:
        await store.ensure_index(IndexSpec(name="v", dimensions=16))
        await store.replace_document("v", StoredDocument(document_id="d", content_hash="h"), chunks, vectors)
        assert (await store._require("v")).ann
        for filters in (
            {"n": {"$lt": 20}},
            {"n": {"$gte": 1000}},
            {"day": {"$gte": date(2024, 11, 1)}},
            {"team": "t7", "tags": {"$in": ["g0", "g3"]}},
        ):
            node = parse_filter(filters)
            assert node is not None
            allowed = [i for i, row in enumerate(metadata) if matches(node, row)]
            for query in vectors[:5]:
                hits = await store.search("v", query, top_k=10, filters=filters)
                assert [h.chunk_id for h in hits] == _nearest(vectors, query, allowed, 10), filters


class _Recorder:
    """Records the SQL text and arguments of every ``fetch`` through asyncpg."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, tuple[object, ...]]] = []
        original = asyncpg.Connection.fetch

        async def fetch(conn: asyncpg.Connection, query: str, *args: object, **kwargs: object) -> object:
            self.calls.append((query, args))
            return await original(conn, query, *args, **kwargs)

        monkeypatch.setattr(asyncpg.Connection, "fetch", fetch)

    def take(self) -> list[tuple[str, tuple[object, ...]]]:
        calls, self.calls = self.calls, []
        return calls


async def test_statements_depend_on_the_filter_shape_and_never_hold_keys_or_values(
    pg_store: PostgresVectorStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Unfiltered queries send the index's precomputed statements; filters of one shape send one text
    whatever their keys and values, which travel as parameters (hostile ones included)."""
    name = await _rows_index(pg_store, "remote work policy POL-HR-014")
    index = await pg_store._require(name)
    recorder = _Recorder(monkeypatch)
    query = parse_lexical_query("remote policy")
    await pg_store.search(name, _VECTOR, top_k=5)
    await pg_store.lexical_search(name, query, top_k=5)
    assert [sql for sql, _ in recorder.take() if "row_id" in sql or "distance" in sql] == [
        index.sql.search_exact,
        index.sql.candidates,
    ]
    hostile = f"{CANARY}'); DROP TABLE x; --"
    first = {INJECTION_KEY: {"$gt": hostile, "$nin": [hostile, 3]}, "$or": [{"a": 1}, {hostile: {"$exists": True}}]}
    second = {"k": {"$gt": "v", "$nin": ["w", 4]}, "$or": [{"b": 2}, {"c": {"$exists": True}}]}
    sent = []
    for filters in (first, second):
        await pg_store.search(name, _VECTOR, top_k=5, filters=filters)
        await pg_store.lexical_search(name, query, top_k=5, filters=filters)
        sent.append([(sql, args) for sql, args in recorder.take() if sql != index.sql.read_blocks])
    texts = [[sql for sql, _ in calls] for calls in sent]
    assert texts[0] == texts[1]
    assert len(set(texts[0])) == 2  # the vector statement and the candidates statement
    assert not any(CANARY in sql or "DROP" in sql or "te'am" in sql for sql in texts[0])
    assert all(INJECTION_KEY in args and hostile in args for _, args in sent[0])
    assert await pg_store.count(name) == len(FILTER_ROWS)


async def test_equality_filters_use_the_gin_index_in_the_stores_own_statement(pg_store: PostgresVectorStore) -> None:
    """The statement the store sends for ``{"team": ...}`` is a containment test the planner serves
    with a bitmap scan of the metadata index; a range alone is not."""
    await pg_store.ensure_index(IndexSpec(name="gin", dimensions=3))
    chunks = [
        dataclasses.replace(c, metadata={"team": f"t{i % 500}", "year": 2000 + i % 25})
        for i, c in enumerate(make_chunks("d", ["x"] * 20_000))
    ]
    vectors = np.tile(_VECTOR, (len(chunks), 1))
    await pg_store.replace_document("gin", StoredDocument(document_id="d", content_hash="h"), chunks, vectors)
    index = await pg_store._require("gin")
    statement = index.sql.search_exact_filtered
    assert statement is not None

    async def plan(filters: dict[str, Any]) -> str:
        node = parse_filter(filters)
        assert node is not None
        sql, parameters = statement.bind(node)
        async with pg_store.pool.acquire() as conn:
            await conn.execute(f"ANALYZE {index.sql.table}")
            lines = await conn.fetch(f"EXPLAIN {sql}", _VECTOR, 10, *parameters)
        return "\n".join(line[0] for line in lines)

    assert "Bitmap Index Scan" in await plan({"team": "t7"})
    assert "Bitmap Index Scan" in await plan({"team": {"$in": ["t7", "t8"]}, "year": {"$gte": 2020}})
    assert "Bitmap Index Scan" not in await plan({"year": {"$gte": 2020}})
    hits = await pg_store.search("gin", _VECTOR, top_k=100, filters={"team": "t7", "year": {"$gte": 2007}})
    assert len(hits) == 40
    assert {hit.metadata["team"] for hit in hits} == {"t7"}


async def test_the_largest_filters_run(pg_store: PostgresVectorStore) -> None:
    """128 conditions (124 datetime ranges, the costliest SQL, and three 1,000-value $in lists), on every path."""
    name = await _rows_index(pg_store, "remote work policy POL-HR-014")
    instant = datetime(2024, 5, 1, 8, tzinfo=UTC)
    widest = {
        "$or": [{"updated": {"$gte": instant}} for _ in range(MAX_FILTER_CONDITIONS - 4)]
        + [{"team": {"$in": [f"t{i}" for i in range(999)] + ["hr"]}} for _ in range(3)]
    }
    expected = _expected(widest)
    assert expected
    assert sorted(h.chunk_id for h in await pg_store.search(name, _VECTOR, top_k=20, filters=widest)) == expected
    for text in ("policy", '"remote work"', "HR-01"):
        hits = await pg_store.lexical_search(name, parse_lexical_query(text), top_k=20, filters=widest)
        assert sorted(h.chunk_id for h in hits) == expected, text


_TENANT_DOCUMENTS = [
    RagDocument(document_id="a-1", content="Remote work policy POL-HR-014.", metadata={"tenant": "a", "year": 2024}),
    RagDocument(document_id="a-2", content="Remote work policy, older.", metadata={"tenant": "a", "year": 2019}),
    RagDocument(document_id="b-1", content="Remote work policy POL-HR-014.", metadata={"tenant": "b", "year": 2024}),
    RagDocument(document_id="n-1", content="Remote work policy, no tenant.", metadata={"year": 2024}),
]


@pytest.mark.parametrize(
    "widening",
    [
        {"$or": [{"tenant": "b"}, {"tenant": {"$exists": True}}]},
        {"$or": [{"year": 2024}, {"$not": {"year": 2024}}]},
        {"tenant": {"$in": ["a", "b"]}},
        {"$not": {"tenant": "a"}},
        {"tenant": {"$ne": "a"}},
        {"$or": [{"tenant": {"$exists": False}}, {"year": {"$gte": 2000}}]},
    ],
)
async def test_no_query_filter_widens_the_tenant_scope_in_any_mode(
    postgres_dsn: str, schema: str, widening: dict[str, Any]
) -> None:
    """Through the retriever, as applications call it: every mode (hybrid too) stays inside tenant a."""
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.use_retrieval_scope(StaticRetrievalScope({"tenant": "a"})).add_index(
            "tenants",
            lambda index: (
                index.use_documents(_TENANT_DOCUMENTS)
                .use_embedding(HashingEmbedding(dimensions=64))
                .use_vector_store(PostgresVectorStorage(dsn=postgres_dsn, schema=schema))
            ),
        ),
    )
    async with builder.build() as host:
        await host.services.get(RagIngestionManager).run("tenants")
        retriever = host.services.get(RagRetriever)
        for mode in RagRetrievalMode:
            for text in ("remote work policy", "HR-01", '"work policy"'):
                result = await retriever.retrieve(
                    RagQuery(index_name="tenants", text=text, mode=mode, top_k=10, filters=widening)
                )
                assert {hit.document_id for hit in result.hits} <= {"a-1", "a-2"}, (mode, text)
            narrowed = await retriever.retrieve(
                RagQuery(index_name="tenants", text="remote policy", mode=mode, filters={"year": {"$gte": 2020}})
            )
            assert [hit.document_id for hit in narrowed.hits] == ["a-1"], mode


async def test_list_valued_metadata_is_stored_as_a_json_array(pg_store: PostgresVectorStore) -> None:
    """Lists keep their order and element types in ``jsonb``; non-finite numbers are refused before the write."""
    from runiq.rag import RagValidationError

    await pg_store.ensure_index(IndexSpec(name="lists", dimensions=3))
    chunk = dataclasses.replace(make_chunks("d", ["x"])[0], metadata={"tags": ("a", 3, 2.5, True), "none": ()})
    await pg_store.replace_document("lists", StoredDocument(document_id="d", content_hash="h"), [chunk], np.eye(1, 3))
    index = await pg_store._require("lists")
    async with pg_store.pool.acquire() as conn:
        stored = await conn.fetchval(f"SELECT metadata::text FROM {index.sql.table}")
    assert re.sub(r"\s", "", stored) == '{"none":[],"tags":["a",3,2.5,true]}'
    bad = dataclasses.replace(chunk, metadata={"tags": (1.0, float("nan"))})
    with pytest.raises(RagValidationError, match="finite"):
        await pg_store.replace_document(
            "lists", StoredDocument(document_id="d", content_hash="h2"), [bad], np.eye(1, 3)
        )


_GUIDE = Path(__file__).resolve().parents[3] / "docs" / "how-to" / "filtering.md"
_FENCE = re.compile(r"^```python\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
_IN_MEMORY = ".use_in_memory_vector_store()"


def _guide_blocks() -> list[Any]:
    blocks = [code for code in _FENCE.findall(_GUIDE.read_text(encoding="utf-8")) if _IN_MEMORY in code]
    return [pytest.param(code, id=f"filtering.md[{i}]") for i, code in enumerate(blocks)]


def test_the_guide_has_store_examples() -> None:
    assert len(_guide_blocks()) >= 2  # operators in every mode, and the tenant scope


@pytest.mark.parametrize("code", _guide_blocks())
async def test_the_filtering_guide_holds_in_postgresql(postgres_dsn: str, schema: str, code: str) -> None:
    """docs/how-to/filtering.md's examples, their in-memory store swapped for this one: each assertion
    on the page (every operator, in every mode, hybrid included; the tenant scope) holds in PostgreSQL."""
    store = f".use_vector_store(PostgresVectorStorage(dsn={postgres_dsn!r}, schema={schema!r}))"
    plain_builder = "HostBuilder(load_entry_points=False)"
    assert code.count(plain_builder) == 1
    swapped = code.replace(_IN_MEMORY, store).replace(
        plain_builder, "HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])"
    )
    prelude = "import runiq_postgresql.plugin\nfrom runiq_postgresql import PostgresVectorStorage\n"
    completed = await asyncio.to_thread(
        subprocess.run,  # our own interpreter running our own docs
        [sys.executable, "-c", prelude + swapped],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={name: value for name, value in os.environ.items() if not name.upper().startswith("RUNIQ_")},
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    conn = await asyncpg.connect(postgres_dsn)
    try:
        assert await conn.fetchval(f'SELECT count(*) FROM "{schema}".indexes') == 1  # it ran here
    finally:
        await conn.close()
