"""The store behind PgBouncer in transaction mode (Debian's 1.18: no protocol-level prepared statements).

The ``pgbouncer`` fixture (conftest) runs it on 127.0.0.1 in front of the session's server, which
listens on a Unix socket only, so everything here reaches the server through the bouncer. Its
``runiq`` database multiplexes clients over ``pool_size`` (4) server connections, ``runiq_single``
over one; it ignores no startup parameter.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
from collections.abc import AsyncIterator
from typing import Any, Protocol

import asyncpg
import numpy as np
import pytest
from pydantic import SecretStr

from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import LexicalSearchContract, VectorStoreContract, make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore


class Bouncer(Protocol):
    """The ``pgbouncer`` fixture (conftest modules are not importable by name)."""

    pool_size: int

    def dsn(self, database: str = "runiq", user: str = "postgres") -> str: ...


class TestBouncedStoreExact(VectorStoreContract):
    """Vector contract with exact scans, through PgBouncer."""

    @pytest.fixture
    async def store(self, bounced_options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with PostgresVectorStore(bounced_options) as store:
            yield store


class TestBouncedStoreHnsw(VectorStoreContract):
    """Vector contract through the HNSW path (``hnsw.ef_search`` set in each search's statement)."""

    @pytest.fixture
    async def store(self, bounced_options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with PostgresVectorStore(bounced_options.model_copy(update={"ann_min_rows": 0})) as store:
            yield store


class TestBouncedLexical(LexicalSearchContract):
    @pytest.fixture
    async def store(self, bounced_options: PostgresStoreOptions) -> AsyncIterator[PostgresVectorStore]:
        async with PostgresVectorStore(bounced_options) as store:
            yield store


# -- the bouncer is what the issue describes ------------------------------------------------------


async def test_the_bouncer_pools_transactions_not_sessions(pgbouncer: Bouncer) -> None:
    """Six clients open at once share the one server connection of ``runiq_single`` (session mode would block)."""
    clients = [await asyncpg.connect(pgbouncer.dsn("runiq_single"), statement_cache_size=0) for _ in range(6)]
    try:
        pids = await asyncio.wait_for(asyncio.gather(*(c.fetchval("SELECT pg_backend_pid()") for c in clients)), 30)
    finally:
        for client in clients:
            await client.close()
    assert len(set(pids)) == 1


async def test_the_bouncer_refuses_custom_startup_parameters(pgbouncer: Bouncer) -> None:
    """What the pool used to send (search_path, hnsw.ef_search) is refused at connect."""
    for name, value in (("search_path", "public"), ("hnsw.ef_search", "160")):
        with pytest.raises(asyncpg.ProtocolViolationError, match="unsupported startup parameter"):
            await asyncpg.connect(pgbouncer.dsn(), server_settings={name: value})


# One application run: open a store through ``runiq_single`` (one server connection), write, search, exit.
_RUN = """
import asyncio, sys
import numpy as np
from runiq.errors import VectorStoreUnavailableError
from runiq.rag.providers import IndexSpec, StoredDocument
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore

async def main(dsn, schema, cache):
    options = PostgresStoreOptions(dsn=dsn, schema=schema, statement_cache_size=int(cache), pool_max_size=2)
    outcome = "ok"
    try:
        async with PostgresVectorStore(options) as store:
            await store.ensure_index(IndexSpec(name="runs", dimensions=3))
            doc = StoredDocument(document_id="d", content_hash="h")
            await store.replace_document("runs", doc, make_chunks("d", ["text"]), np.ones((1, 3)))
            await store.search("runs", np.ones(3), top_k=1)
    except VectorStoreUnavailableError as exc:
        outcome = str(exc.sqlstate)
    print("outcome", outcome)

asyncio.run(main(*sys.argv[1:]))
"""


async def _run(dsn: str, schema: str, cache: int) -> str:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _RUN, dsn, schema, str(cache), stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), 120)
    assert process.returncode == 0
    return [line for line in out.decode().splitlines() if line.startswith("outcome ")][-1].removeprefix("outcome ")


async def test_a_later_run_fails_on_duplicate_prepared_statements_unless_the_cache_is_off(
    pgbouncer: Bouncer, schema: str
) -> None:
    """Each process names its statements ``__asyncpg_stmt_1__``...: with the cache on, the second run finds
    the first run's names on the shared server connection (42P05); with ``statement_cache_size=0`` none."""
    dsn = pgbouncer.dsn("runiq_single")
    assert await _run(dsn, schema, 100) == "ok"
    assert await _run(dsn, schema, 100) == "42P05"  # duplicate_prepared_statement
    assert await _run(dsn, schema, 0) == "ok"
    assert await _run(dsn, schema, 0) == "ok"


# -- two pools (replicas) sharing the bouncer -----------------------------------------------------

_DIMS = 8
_DOCS = 40


def _document(i: int, version: int, rng: np.random.Generator) -> tuple[StoredDocument, list[Any], np.ndarray]:
    doc = f"d{i:03d}"
    texts = [f"report {i} version {version} topic{i % 5}", f"appendix POL-{i:03d} part two"]
    chunks = [dataclasses.replace(c, metadata={"topic": i % 5}) for c in make_chunks(doc, texts)]
    return StoredDocument(document_id=doc, content_hash=f"h{version}"), chunks, rng.normal(size=(2, _DIMS))


async def _workload(store: PostgresVectorStore, index: str, seed: int, rounds: int) -> None:
    """Writes, bulk writes, deletes and every search path, interleaved with the other replica's."""
    rng = np.random.default_rng(seed)
    query = parse_lexical_query("report topic3 POL-007")
    for r in range(rounds):
        i = int(rng.integers(0, _DOCS))
        await store.replace_document(index, *_document(i, r, rng))
        await store.replace_documents(index, [_document(int(j), r, rng) for j in rng.choice(_DOCS, 3, replace=False)])
        vector = rng.normal(size=_DIMS).astype(np.float32)
        await store.search(index, vector, top_k=5)
        await store.search(index, vector, top_k=60)  # ef_search 240: above the default floor
        await store.search(index, vector, top_k=5, filters={"topic": 2})  # iterative scan
        await store.lexical_search(index, query, top_k=5)
        await store.count(index)
        await store.document_hashes(index)
        if r % 4 == 3:
            await store.delete_documents(index, [f"d{int(rng.integers(0, _DOCS)):03d}"])


async def test_two_pools_share_the_bouncer_under_concurrent_searches_and_writes(
    pgbouncer: Bouncer, bounced_options: PostgresStoreOptions
) -> None:
    """Two stores (two asyncpg pools, users ``postgres`` and ``replica``) of 8 connections each, 4 server
    connections: 16 concurrent workers raise no duplicate-prepared-statement or startup-parameter error."""
    base = bounced_options.model_copy(update={"pool_max_size": 8, "ann_min_rows": 0})
    replica = base.model_copy(update={"dsn": SecretStr(pgbouncer.dsn(user="replica"))})
    async with PostgresVectorStore(base) as first, PostgresVectorStore(replica) as second:
        assert first.pool is not second.pool
        await first.ensure_index(IndexSpec(name="shared", dimensions=_DIMS))
        await second.ensure_index(IndexSpec(name="shared", dimensions=_DIMS))
        stores = [first, second] * 8
        assert len(stores) > pgbouncer.pool_size
        results = await asyncio.wait_for(
            asyncio.gather(*(_workload(s, "shared", seed, 6) for seed, s in enumerate(stores)), return_exceptions=True),
            timeout=300,
        )
        assert [r for r in results if r is not None] == []
        hashes = await first.document_hashes("shared")
        assert await second.count("shared") == 2 * len(hashes)


async def test_the_ingestion_lease_is_exclusive_behind_the_bouncer(
    pgbouncer: Bouncer, bounced_options: PostgresStoreOptions
) -> None:
    """A session advisory lock would land on a server connection the next client reuses: it must not."""
    first, second = PostgresVectorStore(bounced_options), PostgresVectorStore(bounced_options)
    await first.open()
    await second.open()
    try:
        for _ in range(3):
            async with first.ingestion_lease("docs") as held:
                assert held is True
                for _ in range(pgbouncer.pool_size):  # whichever server connection the bouncer hands out
                    async with second.ingestion_lease("docs") as other:
                        assert other is False
            async with second.ingestion_lease("docs") as after:
                assert after is True
    finally:
        await first.close()
        await second.close()
