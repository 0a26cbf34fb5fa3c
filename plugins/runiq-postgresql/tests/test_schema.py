"""Versioned, idempotent migrations serialised by an advisory lock."""

from __future__ import annotations

import asyncio

import asyncpg
import pytest

from runiq.rag import VectorStoreError
from runiq_postgresql.schema import LATEST_VERSION, migrate, schema_version

TABLES = {"schema_version", "indexes", "documents", "term_stats", "ingestion_runs"}


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
