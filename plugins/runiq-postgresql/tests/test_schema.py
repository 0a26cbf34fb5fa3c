"""Versioned, idempotent migrations serialised by an advisory lock."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from runiq.errors import VectorStoreError
from runiq_postgresql.schema import LATEST_VERSION, migrate, schema_version

TABLES = {"schema_version", "indexes", "documents", "ingestion_runs", "shared_runs", "work_claims"}


async def _tables(conn: asyncpg.Connection, schema: str) -> set[str]:
    rows = await conn.fetch("SELECT tablename FROM pg_tables WHERE schemaname = $1", schema)
    return {row["tablename"] for row in rows}


async def test_migrates_from_empty_and_rerun_is_a_no_op(postgres_dsn: str, schema: str) -> None:
    """From nothing to the latest version; a second run applies nothing and changes nothing."""
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await migrate(conn, schema, create_extensions=True)
        assert await _tables(conn, schema) == TABLES
        assert await schema_version(conn, schema) == LATEST_VERSION
        first = await conn.fetch(f'SELECT version, applied_at FROM "{schema}".schema_version')
        await migrate(conn, schema, create_extensions=True)
        assert await conn.fetch(f'SELECT version, applied_at FROM "{schema}".schema_version') == first
    finally:
        await conn.close()


async def test_concurrent_migrators_serialise(postgres_dsn: str, schema: str) -> None:
    """Five processes' worth of migrators at once: all succeed, each migration is recorded once."""
    conns = [await asyncpg.connect(postgres_dsn) for _ in range(5)]
    try:
        await asyncio.gather(*(migrate(c, schema, create_extensions=True) for c in conns))
        rows = await conns[0].fetch(f'SELECT version FROM "{schema}".schema_version ORDER BY version')
        assert [row["version"] for row in rows] == list(range(1, LATEST_VERSION + 1))
    finally:
        for conn in conns:
            await conn.close()


async def test_a_newer_schema_is_refused(postgres_dsn: str, schema: str) -> None:
    """A database migrated by a newer plugin is not silently used by an older one."""
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await migrate(conn, schema, create_extensions=True)
        await conn.execute(f'INSERT INTO "{schema}".schema_version (version, description) VALUES (999, $1)', "future")
        with pytest.raises(VectorStoreError, match="newer"):
            await migrate(conn, schema, create_extensions=True)
    finally:
        await conn.close()


async def test_a_partially_created_schema_converges(postgres_dsn: str, schema: str) -> None:
    """Tables that already exist (an interrupted older run) do not break the migration."""
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await migrate(conn, schema, create_extensions=True)
        await conn.execute(f'DELETE FROM "{schema}".schema_version')
        await migrate(conn, schema, create_extensions=True)
        assert await schema_version(conn, schema) == LATEST_VERSION
    finally:
        await conn.close()


async def _schema_at_version(conn: asyncpg.Connection, schema: str, version: int) -> None:
    """The schema as an older runiq-postgresql left it: migrations up to ``version`` applied and recorded."""
    from runiq_postgresql.schema import MIGRATIONS

    await conn.execute(f'CREATE SCHEMA "{schema}"')
    await conn.execute(
        f'CREATE TABLE "{schema}".schema_version (version integer PRIMARY KEY, description text NOT NULL, '
        "applied_at timestamptz NOT NULL DEFAULT now())"
    )
    for migration in MIGRATIONS(f'"{schema}"')[:version]:
        for statement in migration.statements:
            await conn.execute(statement)
        await conn.execute(
            f'INSERT INTO "{schema}".schema_version VALUES ($1, $2)', migration.version, migration.description
        )


async def test_an_index_from_schema_v1_is_marked_with_the_legacy_analyzer(postgres_dsn: str, schema: str) -> None:
    """Upgrading v1 -> v2 keeps existing indexes and records that they were analysed the old way."""
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await _schema_at_version(conn, schema, 1)
        await conn.execute(f"INSERT INTO \"{schema}\".indexes (name, metric) VALUES ('old', 'cosine')")
        await migrate(conn, schema, create_extensions=True)
        assert await schema_version(conn, schema) == LATEST_VERSION
        assert await conn.fetchval(f'SELECT analyzer FROM "{schema}".indexes') == "runiq-lexical-v0"
    finally:
        await conn.close()


async def test_chunk_tables_from_before_v3_get_the_inline_storage_parameter(postgres_dsn: str, schema: str) -> None:
    """v2 -> v3 sets ``toast_tuple_target`` on every existing chunk table, and new tables are created with it."""
    from runiq_postgresql.schema import TOAST_TUPLE_TARGET, chunk_table_ddl

    options = f"toast_tuple_target={TOAST_TUPLE_TARGET}"
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await _schema_at_version(conn, schema, 2)
        old_id = await conn.fetchval(
            f"INSERT INTO \"{schema}\".indexes (name, metric) VALUES ('old', 'cosine') RETURNING index_id"
        )
        storage = f" WITH (toast_tuple_target = {TOAST_TUPLE_TARGET})"
        v2_table = chunk_table_ddl(schema, old_id, None)[0].replace(storage, "")
        assert "toast_tuple_target" not in v2_table
        await conn.execute(v2_table)
        await conn.execute(f"INSERT INTO \"{schema}\".indexes (name, metric) VALUES ('no-table', 'cosine')")
        reloptions = "SELECT reloptions FROM pg_class WHERE oid = to_regclass($1)"
        assert await conn.fetchval(reloptions, f'"{schema}".chunks_{old_id}') is None
        await migrate(conn, schema, create_extensions=True)
        assert await schema_version(conn, schema) == LATEST_VERSION
        assert await conn.fetchval(reloptions, f'"{schema}".chunks_{old_id}') == [options]
        for statement in chunk_table_ddl(schema, 999, 3):
            await conn.execute(statement)
        assert await conn.fetchval(reloptions, f'"{schema}".chunks_999') == [options]
    finally:
        await conn.close()


async def test_reopening_an_index_with_other_analyzer_options_is_refused(postgres_dsn: str, schema: str) -> None:
    """BM25 statistics depend on the analyzer: a store with other stopwords/stemmer must not mix them in."""
    from runiq.rag import RagConfigurationError
    from runiq.rag.providers import DistanceMetric, IndexSpec
    from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore

    spec = IndexSpec(name="docs", dimensions=None, metric=DistanceMetric.COSINE, embedding_model=None)
    async with PostgresVectorStore(PostgresStoreOptions(dsn=postgres_dsn, schema=schema)) as store:
        await store.ensure_index(spec)
    other = PostgresStoreOptions(dsn=postgres_dsn, schema=schema, stopwords="none")
    async with PostgresVectorStore(other) as store:
        with pytest.raises(RagConfigurationError, match="different lexical analyzer") as caught:
            await store.ensure_index(spec)
    assert "docs" in str(caught.value)
    assert postgres_dsn not in str(caught.value)


async def _live_postings(conn: asyncpg.Connection, table: str) -> set[tuple[str, int, int, int]]:
    """(lexeme, row_id, tf, length) of every posting in a postings table that no tombstone covers."""
    from runiq_postgresql.postings import gather

    blocks = await conn.fetch(f"SELECT term, dead, high, wide, rows, tfs, lengths FROM {table}")
    out = set()
    for term in {b["term"] for b in blocks}:
        g = gather([b for b in blocks if b["term"] == term], [term])
        dead = set(g.dead.tolist())
        rows = zip(g.rows.tolist(), g.tfs.tolist(), g.lengths.tolist(), strict=True)
        out |= {(term, r, int(t), int(n)) for r, t, n in rows if r not in dead}
    return out


async def test_chunk_tables_from_before_v5_get_postings_and_store_assigned_row_ids(
    postgres_dsn: str, schema: str
) -> None:
    """v4 -> v5 fills a postings table per existing chunk table from its tsvectors (the same postings the
    store writes) and lets the store assign row ids; searches on the upgraded index equal the in-memory store's."""
    import numpy as np

    from runiq.rag.providers import IndexSpec, InMemoryVectorStore, StoredDocument, parse_lexical_query
    from runiq.rag.testing import make_chunks
    from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore

    corpus = {f"d{i}": [f"remote work {'policy ' * (i % 3)}the end", f"travel CS1503 w{i} remote"] for i in range(30)}
    memory = InMemoryVectorStore()
    spec = IndexSpec(name="old", dimensions=3, embedding_model="m")

    async def load(store: object, docs: dict[str, list[str]]) -> None:
        for doc_id, texts in docs.items():
            vectors = np.ones((len(texts), 3), dtype=np.float32)
            document = StoredDocument(document_id=doc_id, content_hash="h")
            await store.replace_document("old", document, make_chunks(doc_id, texts), vectors)  # type: ignore[attr-defined]

    options = PostgresStoreOptions(dsn=postgres_dsn, schema=schema)
    async with PostgresVectorStore(options) as store:
        for target in (store, memory):
            await target.ensure_index(spec)
            await load(target, corpus)
        index = await store._require("old")
    conn = await asyncpg.connect(postgres_dsn)
    try:
        written = await _live_postings(conn, index.sql.postings)
        # What v4 left: no postings table, row ids generated by the server only, versions 5+ not applied.
        await conn.execute(f"DROP TABLE {index.sql.postings}")
        await conn.execute(f"ALTER TABLE {index.sql.table} ALTER COLUMN row_id SET GENERATED ALWAYS")
        await conn.execute(f'DELETE FROM "{schema}".schema_version WHERE version >= 5')
        await migrate(conn, schema, create_extensions=True)
        assert await schema_version(conn, schema) == LATEST_VERSION
        assert await _live_postings(conn, index.sql.postings) == written
        identity = "SELECT attidentity::text FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'row_id'"
        assert await conn.fetchval(identity, index.sql.table) == "d"
    finally:
        await conn.close()
    async with PostgresVectorStore(options) as store:
        update = {"d3": ["remote remote policy"], "d31": ["new policy remote"]}
        for target in (store, memory):
            await load(target, update)
        for text in ("remote policy", "cs1503 travel", "the end", "w7"):
            expected = await memory.lexical_search("old", parse_lexical_query(text), top_k=8)
            actual = await store.lexical_search("old", parse_lexical_query(text), top_k=8)
            assert [h.key for h in actual] == [h.key for h in expected], text


async def test_a_schema_from_v5_gets_the_shared_run_tables(postgres_dsn: str, schema: str) -> None:
    """v5 -> v6 adds the shared ingestion run tables and keeps what was there."""
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await _schema_at_version(conn, schema, 5)
        await conn.execute(f"INSERT INTO \"{schema}\".indexes (name, metric) VALUES ('old', 'cosine')")
        assert "shared_runs" not in await _tables(conn, schema)
        await migrate(conn, schema, create_extensions=True)
        assert await schema_version(conn, schema) == LATEST_VERSION
        assert await _tables(conn, schema) == TABLES
        assert await conn.fetchval(f'SELECT count(*) FROM "{schema}".indexes') == 1
    finally:
        await conn.close()


async def test_a_schema_from_v6_gets_a_nullable_source_stamp_per_document(postgres_dsn: str, schema: str) -> None:
    """v6 -> v7 adds documents.source_stamp (NULL for every existing document: each is read once more)."""
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await _schema_at_version(conn, schema, 6)
        index_id = await conn.fetchval(
            f"INSERT INTO \"{schema}\".indexes (name, metric) VALUES ('old', 'cosine') RETURNING index_id"
        )
        await conn.execute(
            f"INSERT INTO \"{schema}\".documents (index_id, document_id, content_hash) VALUES ($1, 'a.txt', 'h')",
            index_id,
        )
        columns = (
            "SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'documents'"
        )
        assert "source_stamp" not in {row["column_name"] for row in await conn.fetch(columns, schema)}
        await migrate(conn, schema, create_extensions=True)
        assert await schema_version(conn, schema) == LATEST_VERSION
        assert "source_stamp" in {row["column_name"] for row in await conn.fetch(columns, schema)}
        row = await conn.fetchrow(f'SELECT content_hash, source_stamp FROM "{schema}".documents')
        assert (row["content_hash"], row["source_stamp"]) == ("h", None)
    finally:
        await conn.close()
