"""The identifier substring path: fragments no token matches are found through the trigram index
over the chunks' identifier-like words, for rows written by either write path and for rows written
before schema version 4 (matched on their content)."""

from __future__ import annotations

import asyncpg
import numpy as np
import pytest

from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore
from runiq_postgresql.schema import LATEST_VERSION, schema_version

TEXTS = {
    "build": "Build XQ7-ZK9 failed in filename.cs at IRagRetriever.cs line 40.",
    "plain": "The policy for remote work and travel expenses.",
}
# Each fragment's tokens match no chunk ("q7-z": its parts are single characters, which are not
# indexed; "ame.c"/"ame"), so only the substring path can find it. The rule is the core's
# (runiq.rag._lexical.fragments): one word holding a digit or a mark.
FRAGMENTS = ["Q7-Z", "ame.c"]


async def _ids(store: PostgresVectorStore, index: str, text: str) -> list[str]:
    return [hit.document_id for hit in await store.lexical_search(index, parse_lexical_query(text), top_k=5)]


async def _fetch(dsn: str, sql: str, *args: object, setup: tuple[str, ...] = ()) -> list[asyncpg.Record]:
    """One query on a connection of its own (after the ``setup`` statements), outside the store."""
    conn = await asyncpg.connect(dsn)
    try:
        for statement in setup:
            await conn.execute(statement)
        return list(await conn.fetch(sql, *args))
    finally:
        await conn.close()


async def _write(store: PostgresVectorStore, index: str, *, bulk: bool) -> None:
    await store.ensure_index(IndexSpec(name=index, dimensions=None))
    items = [
        (StoredDocument(document_id=doc, content_hash="h"), make_chunks(doc, [text]), None)
        for doc, text in TEXTS.items()
    ]
    if bulk:
        await store.replace_documents(index, items)
        return
    for document, chunks, vectors in items:
        await store.replace_document(index, document, chunks, vectors)


async def test_fragments_are_found_through_either_write_path(options: PostgresStoreOptions) -> None:
    async with PostgresVectorStore(options) as store:
        await _write(store, "copied", bulk=True)
        await _write(store, "inserted", bulk=False)
        for index in ("copied", "inserted"):
            for fragment in FRAGMENTS:
                assert await _ids(store, index, fragment) == ["build"], (index, fragment)
            assert await _ids(store, index, "olicy") == []  # plain words never take the substring path
            assert await _ids(store, index, "agRetrie") == []  # nor camelCase ones


@pytest.mark.parametrize("bulk", [True, False], ids=["copy", "insert"])
async def test_the_identifier_column_holds_only_identifier_like_words(
    options: PostgresStoreOptions, postgres_dsn: str, bulk: bool
) -> None:
    async with PostgresVectorStore(options) as store:
        await _write(store, "docs", bulk=bulk)
        index = await store._require("docs")
        rows = await _fetch(
            postgres_dsn, f"SELECT document_id, identifiers FROM {index.sql.table} ORDER BY document_id"
        )
    assert [(row["document_id"], row["identifiers"]) for row in rows] == [
        ("build", "40 filename.cs iragretriever.cs xq7-zk9"),  # words as the analyzer splits them
        ("plain", ""),
    ]


async def test_substring_queries_use_the_trigram_index(
    pg_store: PostgresVectorStore, postgres_dsn: str, schema: str
) -> None:
    await _write(pg_store, "docs", bulk=True)
    index = await pg_store._require("docs")
    setup = (f'SET search_path = "{schema}", public', "SET enable_seqscan = off")
    rows = await _fetch(postgres_dsn, f"EXPLAIN {index.sql.substring}", "%q7-z%", 5, setup=setup)
    plan = "\n".join(row[0] for row in rows)
    assert f"{index.sql.table_name}_trgm" in plan


async def test_rows_from_before_schema_v4_are_matched_on_their_content(
    options: PostgresStoreOptions, postgres_dsn: str
) -> None:
    """An index written at v3 (no identifiers column, trigram index over all content) is migrated:
    its old rows are still found by fragment, and rows written afterwards use the new column."""
    async with PostgresVectorStore(options) as store:
        await _write(store, "docs", bulk=False)
        table, name = (await store._require("docs")).sql.table, (await store._require("docs")).sql.table_name
    conn = await asyncpg.connect(postgres_dsn)
    s = f'"{options.schema_name}"'
    try:  # back to what schema v3 created
        await conn.execute(f"ALTER TABLE {table} DROP COLUMN identifiers")  # drops the trigram index on it too
        await conn.execute(f'CREATE INDEX "{name}_trgm" ON {table} USING gin (lower(content) gin_trgm_ops)')
        await conn.execute(f"DELETE FROM {s}.schema_version WHERE version > 3")
    finally:
        await conn.close()
    async with PostgresVectorStore(options) as store:
        assert await _ids(store, "docs", "Q7-Z") == ["build"]
        new = "Release RC-2024.11 of the QX-551 module."
        await store.replace_document(
            "docs", StoredDocument(document_id="new", content_hash="h"), make_chunks("new", [new]), None
        )
        assert await _ids(store, "docs", "X-55") == ["new"]
        assert await _ids(store, "docs", "ame.c") == ["build"]
    conn = await asyncpg.connect(postgres_dsn)
    try:
        assert await schema_version(conn, options.schema_name) == LATEST_VERSION
        definition = await conn.fetchval("SELECT pg_get_indexdef(to_regclass($1))", f'{s}."{name}_trgm"')
        nulls = await conn.fetchval(
            f"SELECT array_agg(document_id ORDER BY document_id) FROM {table} WHERE identifiers IS NULL"
        )
    finally:
        await conn.close()
    assert "using gin (coalesce(identifiers, lower(content)) gin_trgm_ops)" in definition.lower()
    assert nulls == ["build", "plain"]  # old rows were not rewritten; only new writes fill the column


async def test_vectors_do_not_change_the_substring_path(pg_store: PostgresVectorStore) -> None:
    """An index with embeddings stores the same identifier column (the row layout differs only by the vector)."""
    await pg_store.ensure_index(IndexSpec(name="vec", dimensions=3))
    rng = np.random.default_rng(1)
    chunks = make_chunks("build", [TEXTS["build"]])
    await pg_store.replace_document(
        "vec", StoredDocument(document_id="build", content_hash="h"), chunks, rng.normal(size=(1, 3))
    )
    assert await _ids(pg_store, "vec", "Q7-Z") == ["build"]
