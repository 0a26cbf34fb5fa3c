"""Pooled connections keep no session state that transaction pooling would break (direct server).

Searches set ``hnsw.ef_search`` (and the iterative scan) locally to their statement, no custom
startup parameter is sent, the statement cache is an option, and the ingestion lease lives in a
transaction. The same store behind PgBouncer: ``test_pgbouncer``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import numpy as np
import pytest
from pydantic import SecretStr, ValidationError

from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore

PGVECTOR_DEFAULT_EF_SEARCH = "40"


async def _load_vector(conn: asyncpg.Connection) -> None:
    """pgvector defines its settings when its library loads in the backend (first use of a vector)."""
    await conn.execute("SELECT '[1]'::vector")


async def test_pooled_connections_carry_no_custom_startup_settings(pg_store: PostgresVectorStore) -> None:
    """search_path and hnsw.ef_search are the server's own; application_name (which PgBouncer tracks) is sent."""
    async with pg_store.pool.acquire() as conn:
        await _load_vector(conn)
        sources = dict(await conn.fetch("SELECT name, source FROM pg_settings WHERE name = ANY($1)", ["search_path"]))
        assert sources["search_path"] != "client"
        assert await conn.fetchval("SHOW hnsw.ef_search") == PGVECTOR_DEFAULT_EF_SEARCH
        assert await conn.fetchval("SHOW application_name") == "runiq"


async def _graph_index(store: PostgresVectorStore, rows: int) -> np.ndarray:
    """``rows`` chunks ``d#i`` with random vectors, metadata ``{"n": i}``, searched through HNSW."""
    vectors = np.random.default_rng(3).normal(size=(rows, 8)).astype(np.float32)
    await store.ensure_index(IndexSpec(name="v", dimensions=8))
    chunks = [dataclasses.replace(c, metadata={"n": i}) for i, c in enumerate(make_chunks("d", ["x"] * rows))]
    await store.replace_document("v", StoredDocument(document_id="d", content_hash="h"), chunks, vectors)
    assert (await store._require("v")).ann
    return vectors


async def test_hnsw_searches_set_their_settings_for_their_statement_alone(
    options: PostgresStoreOptions, through_the_graph: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ef_search (``4 * top_k`` above the floor) and the filtered iterative scan reach the graph walk
    of the search's one statement, and the one pooled connection keeps the server's values after it."""
    single = {"ann_min_rows": 0, "pool_min_size": 1, "pool_max_size": 1}
    async with PostgresVectorStore(options.model_copy(update=single)) as store:
        vectors = await _graph_index(store, 300)
        statements: list[str] = []
        fetch = asyncpg.Connection.fetch

        async def recorded(conn: asyncpg.Connection, query: str, *args: object, **kwargs: object) -> object:
            statements.append(query)
            return await fetch(conn, query, *args, **kwargs)

        monkeypatch.setattr(asyncpg.Connection, "fetch", recorded)
        # pgvector's default ef_search (40) would stop the unfiltered walk at 40 chunks.
        assert len(await store.search("v", vectors[0], top_k=60)) == 60
        # Without the iterative scan, the 160 chunks walked hold about 16 of the 30 that pass:
        # the store would fall back to a second, exact statement.
        hits = await store.search("v", vectors[0], top_k=20, filters={"n": {"$lt": 30}})
        assert len(hits) == 20
        assert [sql.split()[0] for sql in statements] == ["WITH", "WITH"]
        monkeypatch.undo()
        async with store.pool.acquire() as conn:
            assert await conn.fetchval("SHOW hnsw.ef_search") == PGVECTOR_DEFAULT_EF_SEARCH
            assert await conn.fetchval("SHOW hnsw.iterative_scan") == "off"


def _database_dsn(dsn: str, database: str) -> str:
    url = urlsplit(dsn)
    return urlunsplit(url._replace(path=f"/{database}"))


@pytest.fixture
async def extensions_elsewhere(postgres_dsn: str) -> AsyncIterator[str]:
    """A fresh database whose vector and pg_trgm live in schema ``ext``, not on the default search path."""
    database = f"ext_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(postgres_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{database}"')
        dsn = _database_dsn(postgres_dsn, database)
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute(
                "CREATE SCHEMA ext; CREATE EXTENSION vector SCHEMA ext; CREATE EXTENSION pg_trgm SCHEMA ext"
            )
        finally:
            await conn.close()
        yield dsn
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        await admin.close()


async def test_extensions_off_the_default_search_path_are_put_on_it(extensions_elsewhere: str) -> None:
    """Direct connections then get search_path as a startup parameter (a transaction-mode bouncer refuses it)."""
    options = PostgresStoreOptions(dsn=SecretStr(extensions_elsewhere), schema="s", ann_min_rows=0)
    async with PostgresVectorStore(options) as store:
        await store.ensure_index(IndexSpec(name="v", dimensions=3))
        doc = StoredDocument(document_id="d", content_hash="h")
        await store.replace_document("v", doc, make_chunks("d", ["see POL-HR-014 now"]), np.ones((1, 3)))
        assert len(await store.search("v", np.ones(3, dtype=np.float32), top_k=1)) == 1
        assert len(await store.lexical_search("v", parse_lexical_query("HR-01"), top_k=1)) == 1  # trigram net
        async with store.pool.acquire() as conn:
            assert await conn.fetchval("SELECT source FROM pg_settings WHERE name = 'search_path'") == "client"
            assert "ext" in await conn.fetchval("SELECT current_schemas(false)::text[]")


# -- statement cache --------------------------------------------------------------------------


def test_statement_cache_size_is_validated() -> None:
    assert PostgresStoreOptions().statement_cache_size == 100
    assert PostgresStoreOptions(statement_cache_size=0).statement_cache_size == 0
    with pytest.raises(ValidationError):
        PostgresStoreOptions(statement_cache_size=-1)


@pytest.mark.parametrize(("cache", "named"), [(0, False), (100, True)])
async def test_statement_cache_size_reaches_the_pool(options: PostgresStoreOptions, cache: int, named: bool) -> None:
    """With 0, the store's queries leave no named prepared statement on their connection."""
    update = {"statement_cache_size": cache, "pool_min_size": 1, "pool_max_size": 1}
    async with PostgresVectorStore(options.model_copy(update=update)) as store:
        await store.ensure_index(IndexSpec(name="v", dimensions=3))
        await store.count("v")
        await store.search("v", np.ones(3, dtype=np.float32), top_k=1)
        async with store.pool.acquire() as conn:
            assert (await conn.fetchval("SELECT count(*) FROM pg_prepared_statements") > 0) is named


# -- the ingestion lease ----------------------------------------------------------------------


async def test_a_held_lease_is_an_idle_transaction_without_a_snapshot(
    options: PostgresStoreOptions, postgres_dsn: str
) -> None:
    """Holding the lease does not hold back vacuum (no backend_xmin) and outlives the server's idle timeout."""
    single = options.model_copy(update={"pool_min_size": 1, "pool_max_size": 1})
    async with PostgresVectorStore(single) as store:
        async with store.pool.acquire() as conn:
            pid = await conn.fetchval("SELECT pg_backend_pid()")
            await conn.execute("SET idle_in_transaction_session_timeout = '100ms'")  # session-wide, this connection
        async with store.ingestion_lease("docs") as held:
            assert held is True
            await asyncio.sleep(0.5)
            observer = await asyncpg.connect(postgres_dsn)
            try:
                row = await observer.fetchrow("SELECT state, backend_xmin FROM pg_stat_activity WHERE pid = $1", pid)
            finally:
                await observer.close()
            assert row is not None
            assert (row["state"], row["backend_xmin"]) == ("idle in transaction", None)
        async with store.pool.acquire() as conn:
            assert await conn.fetchval("SELECT pg_backend_pid()") == pid  # the connection survived the lease


async def test_a_failing_run_releases_the_lease(options: PostgresStoreOptions) -> None:
    async def failing_run(store: PostgresVectorStore) -> None:
        async with store.ingestion_lease("docs") as held:
            assert held is True
            raise RuntimeError("run failed")

    async with PostgresVectorStore(options) as first, PostgresVectorStore(options) as second:
        with pytest.raises(RuntimeError, match="run failed"):
            await failing_run(first)
        async with second.ingestion_lease("docs") as after:
            assert after is True


async def test_a_lease_whose_connection_is_lost_ends_quietly(options: PostgresStoreOptions, postgres_dsn: str) -> None:
    """The server ended the holder's connection mid-run: the block exits, the lock is free, the store works."""
    async with PostgresVectorStore(options) as store:
        async with store.ingestion_lease("docs") as held:
            assert held is True
            killer = await asyncpg.connect(postgres_dsn)
            try:
                killed = await killer.fetchval(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = 'runiq' AND state = 'idle in transaction'"
                )
            finally:
                await killer.close()
            assert killed is True
        async with store.ingestion_lease("docs") as again:
            assert again is True
