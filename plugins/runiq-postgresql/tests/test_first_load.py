"""A first managed ingestion loads in bulk: the GIN indexes are dropped for the load and rebuilt at its end,
the HNSW index is built once, after the last write. Writes of other stores during the load stay correct,
and a process killed inside the load leaves an index that works and gets its indexes back."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import asyncpg
import pytest

import runiq_postgresql.plugin
import runiq_postgresql.store as store_module
from runiq.hosting import HostBuilder
from runiq.rag import HashingEmbedding, RagDocument, RagIngestionManager, RagIngestionState, add_runiq_rag
from runiq.rag._ingestion import pipeline
from runiq.rag.providers import IndexSpec, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks
from runiq_postgresql import PostgresStoreOptions, PostgresVectorStorage, PostgresVectorStore

DOCUMENTS = 120


def _documents(n: int = DOCUMENTS) -> list[RagDocument]:
    return [
        RagDocument(document_id=f"doc-{i:04d}", content=f"Document {i} about policy item P{i * 7} and remote work.")
        for i in range(n)
    ]


def _host(dsn: str, schema: str, documents: list[RagDocument], **options: Any) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    storage = PostgresVectorStorage(dsn=dsn, schema=schema, options=options)
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_documents(documents).use_embedding(HashingEmbedding(dimensions=16)).use_vector_store(storage)
            ),
        ),
    )
    return builder


async def _index_names(dsn: str, schema: str) -> set[str]:
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch("SELECT indexname FROM pg_indexes WHERE schemaname = $1", schema)
    finally:
        await conn.close()
    return {row["indexname"] for row in rows}


def _secondary(index_id: int) -> set[str]:
    table = f"chunks_{index_id}"
    return {f"{table}_lexemes", f"{table}_metadata", f"{table}_trgm"}


async def test_a_first_run_builds_the_hnsw_index_once_after_the_last_write(
    postgres_dsn: str, schema: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ann_min_rows is reached early in the run, but HNSW is built once, over every chunk; the GIN
    indexes are back at the end and serve lexical search."""
    monkeypatch.setattr(pipeline, "WRITE_CHUNKS", 16)  # many writes, most past ann_min_rows
    built_at: list[int] = []
    build = store_module.PostgresVectorStore._build_ann

    async def counting(self: PostgresVectorStore, conn: Any, index_id: int, spec: IndexSpec) -> None:
        built_at.append(int(await conn.fetchval(f'SELECT count(*) FROM "{schema}".chunks_{index_id}')))
        await build(self, conn, index_id, spec)

    monkeypatch.setattr(store_module.PostgresVectorStore, "_build_ann", counting)
    async with _host(postgres_dsn, schema, _documents(), ann_min_rows=20).build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.COMPLETED
    assert built_at == [DOCUMENTS]
    async with PostgresVectorStore(PostgresStoreOptions(dsn=postgres_dsn, schema=schema)) as store:
        index = await store._require("docs")
        assert _secondary(index.index_id) | {f"chunks_{index.index_id}_hnsw"} <= await _index_names(
            postgres_dsn, schema
        )
        hits = await store.lexical_search("docs", parse_lexical_query("P70"), top_k=1)
        assert [hit.document_id for hit in hits] == ["doc-0010"]


async def test_writes_of_another_store_during_a_bulk_load_stay_correct(
    options: PostgresStoreOptions, postgres_dsn: str
) -> None:
    """Another store (another process's) writes, deletes and searches while a load runs; its
    ``ensure_index`` leaves the load's indexes alone; everything is indexed after the load."""
    spec = IndexSpec(name="live", dimensions=None)
    async with PostgresVectorStore(options) as loader, PostgresVectorStore(options) as other:
        await loader.ensure_index(spec)
        index = await loader._require("live")
        async with loader.bulk_load("live"):
            await loader.replace_documents("live", _items("bulk", 50))
            await other.ensure_index(spec)  # sees the indexes missing, but the load holds its lease
            assert not _secondary(index.index_id) & await _index_names(postgres_dsn, options.schema_name)
            await other.replace_documents("live", _items("single", 3))
            assert await other.delete_documents("live", ["bulk-0001"]) == 1
            hits = await other.lexical_search("live", parse_lexical_query(_word(7)), top_k=10)
            assert {hit.document_id for hit in hits} == {"bulk-0007"}
            fragment = await other.lexical_search("live", parse_lexical_query("X8-Qbu"), top_k=10)
            assert {hit.document_id for hit in fragment} == {"bulk-0008"}  # the trigram safety net
            hits = await other.lexical_search("live", parse_lexical_query(_word(1)), top_k=10)
            assert {hit.document_id for hit in hits} == {"single-0001"}  # bulk-0001 is gone
        assert _secondary(index.index_id) <= await _index_names(postgres_dsn, options.schema_name)
        assert await other.document_count("live") == 52
        hits = await other.lexical_search("live", parse_lexical_query(_word(2)), top_k=10)
        assert {hit.document_id for hit in hits} == {"bulk-0002", "single-0002"}


def _word(i: int) -> str:
    """A word of its own for each ``i`` below 676, no part of it an identifier."""
    return f"zz{chr(97 + i // 26)}{chr(97 + i % 26)}"


def _items(prefix: str, n: int) -> list[tuple[StoredDocument, list[Any], None]]:
    return [
        (
            StoredDocument(document_id=f"{prefix}-{i:04d}", content_hash="h"),
            make_chunks(f"{prefix}-{i:04d}", [f"chunk of {prefix} {_word(i)} X{i}-Q{prefix}"]),
            None,
        )
        for i in range(n)
    ]


CHILD = textwrap.dedent(
    """
    import asyncio, sys
    import runiq_postgresql.plugin
    from runiq.hosting import HostBuilder
    from runiq.rag import HashingEmbedding, RagDocument, RagIngestionManager, add_runiq_rag
    from runiq.rag._ingestion import pipeline
    from runiq_postgresql import PostgresVectorStorage

    pipeline.WRITE_CHUNKS = 8  # many small writes: the load lasts while the parent kills it

    dsn, schema = sys.argv[1], sys.argv[2]
    documents = [
        RagDocument(document_id=f"doc-{i:05d}", content=f"Document {i} about policy item P{i * 7} and remote work.")
        for i in range(20000)
    ]
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    add_runiq_rag(builder, lambda rag: rag.add_index("docs", lambda index: index
        .use_documents(documents)
        .use_embedding(HashingEmbedding(dimensions=16))
        .use_vector_store(PostgresVectorStorage(dsn=dsn, schema=schema))
        .configure_embedding_batching(batch_size=4, concurrency=1)))

    async def main():
        async with builder.build() as host:
            await host.services.get(RagIngestionManager).run("docs")

    asyncio.run(main())
    """
)


async def _loading_with_rows(dsn: str, schema: str, child: subprocess.Popen[bytes]) -> None:
    """Wait until the child's first load has dropped the GIN indexes and written some chunks."""
    deadline = time.monotonic() + 120
    conn = await asyncpg.connect(dsn)
    try:
        while time.monotonic() < deadline and child.poll() is None:
            if await _loaded_rows(conn, dsn, schema) >= 50:
                return
            await asyncio.sleep(0.05)
    finally:
        await conn.close()
    raise AssertionError("the child never got inside its bulk load")


async def _loaded_rows(conn: asyncpg.Connection, dsn: str, schema: str) -> int:
    """Chunks stored while the GIN indexes are dropped (0 before the load, or outside it)."""
    try:
        index_id = await conn.fetchval(f'SELECT index_id FROM "{schema}".indexes WHERE name = $1', "docs")
        if index_id is None or _secondary(index_id) & await _index_names(dsn, schema):
            return 0
        return int(await conn.fetchval(f'SELECT count(*) FROM "{schema}".chunks_{index_id}'))
    except asyncpg.UndefinedTableError:  # the child has not migrated the schema yet
        return 0


def _spawn(dsn: str, schema: str, tmp_path: Path) -> subprocess.Popen[bytes]:
    (tmp_path / "child.py").write_text(CHILD)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNIQ_")}
    command = [sys.executable, str(tmp_path / "child.py"), dsn, schema]
    return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)


async def test_a_process_killed_inside_a_first_load_leaves_a_working_index_that_gets_its_indexes_back(
    postgres_dsn: str, schema: str, tmp_path: Path
) -> None:
    child = _spawn(postgres_dsn, schema, tmp_path)
    try:
        await _loading_with_rows(postgres_dsn, schema, child)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    options = PostgresStoreOptions(dsn=postgres_dsn, schema=schema)
    async with PostgresVectorStore(options) as store:
        index = await store._require("docs")
        assert not _secondary(index.index_id) & await _index_names(postgres_dsn, schema)
        stored = await store.document_count("docs")
        assert stored >= 50
        assert await store.count("docs") == stored
        some = (await store.document_id_page("docs", after=None, limit=1))[0]
        query = parse_lexical_query(f'"item P{int(some.removeprefix("doc-")) * 7}"')  # a phrase: scored in SQL
        assert [hit.document_id for hit in await store.lexical_search("docs", query, top_k=1)] == [some]
        await store.ensure_index(IndexSpec(name="docs", dimensions=16, embedding_model=index.spec.embedding_model))
        assert _secondary(index.index_id) <= await _index_names(postgres_dsn, schema)
        assert [hit.document_id for hit in await store.lexical_search("docs", query, top_k=1)] == [some]
    documents = _documents(60)
    async with _host(postgres_dsn, schema, documents).build() as host:  # not a first load: documents are stored
        operation = await host.services.get(RagIngestionManager).run("docs")
    assert operation.state is RagIngestionState.COMPLETED
    assert operation.progress.added_documents == 60
    assert operation.progress.deleted_documents == stored


async def test_a_store_with_one_connection_loads_without_a_lease(
    options: PostgresStoreOptions, postgres_dsn: str
) -> None:
    """The lease would hold the pool's only connection: the load goes without it instead of waiting forever."""
    single = options.model_copy(update={"pool_max_size": 1})
    async with PostgresVectorStore(single) as store:
        await store.ensure_index(IndexSpec(name="one", dimensions=None))
        index = await store._require("one")

        async def load() -> None:
            async with store.bulk_load("one"):
                await store.replace_documents("one", _items("bulk", 5))

        await asyncio.wait_for(load(), 60)
        assert _secondary(index.index_id) <= await _index_names(postgres_dsn, single.schema_name)
        assert await store.document_count("one") == 5
