"""Shared ingestion runs through RagIngestionManager: several hosts (in one process here; see
``test_shared_run_crashes`` for worker processes) share one run of an index through PostgreSQL.

The reference is the same corpus ingested by one ordinary (unshared) run into another schema: the
documents, their content hashes and their chunks must be identical.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest

import runiq_postgresql.plugin
from runiq.hosting import Host, HostBuilder
from runiq.rag import (
    IndexBuilder,
    RagIndexReadiness,
    RagIngestionManager,
    RagIngestionReason,
    RagIngestionState,
    add_runiq_rag,
)
from runiq.rag._ingestion.strategies import IngestionBuilder
from runiq.rag.providers import hookimpl
from runiq.rag.testing import SlowEmbedder

DOCUMENTS = 60
State = dict[str, tuple[str, list[str]]]


class SlowPlugin:
    @hookimpl
    def runiq_register_providers(self, registry: Any) -> None:
        from contextlib import asynccontextmanager

        @asynccontextmanager
        async def open_slow(options: Any) -> AsyncIterator[SlowEmbedder]:
            yield SlowEmbedder(delay=0.02, dimensions=16)

        registry.add_embedding("slow", open_slow)


def _corpus(directory: Path, count: int = DOCUMENTS, version: int = 0) -> Path:
    directory.mkdir(exist_ok=True)
    for i in range(count):
        paragraphs = "\n\n".join(
            f"Document {i} v{version} paragraph {p} on policy {i * 7 + p}." for p in range(1 + i % 3)
        )
        (directory / f"doc-{i:03d}.md").write_text(paragraphs)
    return directory


def _builder(
    dsn: str,
    schema: str,
    documents: Path,
    ingestion: Callable[[IngestionBuilder], object] = lambda i: i.shared_runs(buckets=4, lease_seconds=2),
) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin, SlowPlugin()])

    def index(index: IndexBuilder) -> object:
        return (
            index.use_directory(documents, "*.md")
            .use_embedding("slow")
            .use_vector_store("postgresql", dsn=dsn, schema=schema)
            .configure_chunking(max_characters=60, overlap=0)
            .configure_embedding_batching(batch_size=4, concurrency=1)
            .configure_ingestion(ingestion)
        )

    add_runiq_rag(builder, lambda rag: rag.add_index("docs", index))
    return builder


@pytest.fixture
def stored_state(postgres_dsn: str) -> Callable[[str], Awaitable[State]]:
    async def read(schema: str) -> State:
        conn = await asyncpg.connect(postgres_dsn)
        try:
            index_id = await conn.fetchval(f'SELECT index_id FROM "{schema}".indexes WHERE name = $1', "docs")
            documents = await conn.fetch(f'SELECT document_id, content_hash FROM "{schema}".documents')
            chunks = await conn.fetch(
                f"SELECT document_id, array_agg(content ORDER BY ordinal) AS contents "
                f'FROM "{schema}".chunks_{int(index_id)} GROUP BY document_id'
            )
        finally:
            await conn.close()
        contents = {row["document_id"]: list(row["contents"]) for row in chunks}
        return {row["document_id"]: (row["content_hash"], contents.get(row["document_id"], [])) for row in documents}

    return read


@pytest.fixture
async def reference(postgres_dsn: str, stored_state: Callable[[str], Awaitable[State]], tmp_path: Path) -> State:
    """One ordinary run of the test corpus into its own schema."""
    schema = f"t_{uuid.uuid4().hex[:16]}"
    documents = _corpus(tmp_path / "reference")
    try:
        async with _builder(postgres_dsn, schema, documents, lambda i: i.manual()).build() as host:
            assert (await host.services.get(RagIngestionManager).run("docs")).state is RagIngestionState.COMPLETED
        return await stored_state(schema)
    finally:
        conn = await asyncpg.connect(postgres_dsn)
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
        await conn.close()


async def _shared_runs(dsn: str, schema: str) -> list[asyncpg.Record]:
    conn = await asyncpg.connect(dsn)
    try:
        return await conn.fetch(f'SELECT operation_id, state, run_key FROM "{schema}".shared_runs ORDER BY started_at')
    finally:
        await conn.close()


async def test_three_hosts_share_one_run_with_one_workers_result(
    postgres_dsn: str, schema: str, tmp_path: Path, reference: State, stored_state: Callable[[str], Awaitable[State]]
) -> None:
    """Three hosts run the index at once: one shared run, every bucket once, the single run's documents."""
    documents = _corpus(tmp_path / "docs")
    async with (
        _builder(postgres_dsn, schema, documents).build() as a,
        _builder(postgres_dsn, schema, documents).build() as b,
        _builder(postgres_dsn, schema, documents).build() as c,
    ):
        managers = [host.services.get(RagIngestionManager) for host in (a, b, c)]
        operations = await asyncio.gather(*(manager.run("docs") for manager in managers))
        statuses = [manager.status("docs") for manager in managers]
        history = await managers[0].history("docs")
    assert {op.operation_id for op in operations} == {history[0].operation_id}  # one run, recorded once
    assert len(history) == 1
    assert {op.state for op in operations} == {RagIngestionState.COMPLETED}
    assert {op.progress for op in operations} == {history[0].progress}  # every host reports the run's totals
    progress = operations[0].progress
    assert (progress.discovered_documents, progress.added_documents, progress.failed_documents) == (
        DOCUMENTS,
        DOCUMENTS,
        0,
    )
    assert {s.readiness for s in statuses} == {RagIndexReadiness.READY}
    assert [row["state"] for row in await _shared_runs(postgres_dsn, schema)] == ["completed"]
    assert await stored_state(schema) == reference


async def test_the_finisher_deletes_what_no_bucket_saw_once_every_bucket_is_done(
    postgres_dsn: str, schema: str, tmp_path: Path, stored_state: Callable[[str], Awaitable[State]]
) -> None:
    """Documents gone from the source are deleted at the end of a shared run; changed ones are replaced."""
    documents = _corpus(tmp_path / "docs", count=20)
    async with (
        _builder(postgres_dsn, schema, documents).build() as a,
        _builder(postgres_dsn, schema, documents).build() as b,
    ):
        first = await a.services.get(RagIngestionManager).run("docs")
        for i in range(5):
            (documents / f"doc-{i:03d}.md").unlink()
        (documents / "doc-010.md").write_text("Changed content.")
        second = await asyncio.gather(*(host.services.get(RagIngestionManager).run("docs") for host in (a, b)))
    assert first.progress.added_documents == 20
    assert {op.operation_id for op in second} == {second[0].operation_id} != {first.operation_id}
    progress = second[0].progress
    assert (progress.deleted_documents, progress.updated_documents, progress.skipped_documents) == (5, 1, 14)
    state = await stored_state(schema)
    assert sorted(state) == [f"doc-{i:03d}.md" for i in range(5, 20)]
    assert state["doc-010.md"][1] == ["Changed content."]


async def test_a_failing_source_fails_the_shared_run_and_deletes_nothing(
    postgres_dsn: str, schema: str, tmp_path: Path, stored_state: Callable[[str], Awaitable[State]]
) -> None:
    documents = _corpus(tmp_path / "docs", count=10)
    async with (
        _builder(postgres_dsn, schema, documents).build() as a,
        _builder(postgres_dsn, schema, documents).build() as b,
    ):
        await a.services.get(RagIngestionManager).run("docs")
        before = await stored_state(schema)
        for path in documents.iterdir():
            path.unlink()
        documents.rmdir()  # the whole source is gone: every bucket's pass fails
        failed = await asyncio.gather(*(host.services.get(RagIngestionManager).run("docs") for host in (a, b)))
    assert {op.state for op in failed} == {RagIngestionState.FAILED}
    assert {op.last_failure.code for op in failed if op.last_failure} == {"ingestion_failed"}
    # The first failure ends the run at once; a host that comes after it ended starts (and fails) its own.
    states = [row["state"] for row in await _shared_runs(postgres_dsn, schema)]
    assert states[0] == "completed"
    assert set(states[1:]) == {"failed"}
    assert len(states) in (2, 3)
    assert await stored_state(schema) == before


async def test_cancel_ends_the_run_everywhere_and_a_stopping_host_only_leaves_it(
    postgres_dsn: str, schema: str, tmp_path: Path, reference: State, stored_state: Callable[[str], Awaitable[State]]
) -> None:
    documents = _corpus(tmp_path / "docs")
    async with (
        _builder(postgres_dsn, schema, documents).build() as a,
        _builder(postgres_dsn, schema, documents).build() as b,
    ):
        ma, mb = a.services.get(RagIngestionManager), b.services.get(RagIngestionManager)
        await ma.start("docs")
        await mb.start("docs")
        await asyncio.sleep(0.3)
        cancelled = await ma.cancel("docs")
        other = await mb.wait("docs")
    assert cancelled.state is other.state is RagIngestionState.CANCELLED
    assert cancelled.operation_id == other.operation_id
    assert [row["state"] for row in await _shared_runs(postgres_dsn, schema)] == ["cancelled"]

    # A host stopping mid-run leaves it: the other one finishes every bucket.
    async with _builder(postgres_dsn, schema, documents).build() as c:
        mc = c.services.get(RagIngestionManager)
        leaving = _builder(postgres_dsn, schema, documents).build()
        await leaving.start()
        await leaving.services.get(RagIngestionManager).start("docs")
        await mc.start("docs")
        await asyncio.sleep(0.3)
        await leaving.stop()
        left = leaving.services.get(RagIngestionManager).status("docs").last_operation
        finished = await mc.wait("docs")
    assert left is not None
    assert left.state is RagIngestionState.CANCELLED
    assert finished.state is RagIngestionState.COMPLETED
    assert left.operation_id == finished.operation_id
    assert [row["state"] for row in await _shared_runs(postgres_dsn, schema)] == ["cancelled", "completed"]
    assert await stored_state(schema) == reference


async def test_on_startup_runs_once_per_deployment(
    postgres_dsn: str, schema: str, tmp_path: Path, reference: State, stored_state: Callable[[str], Awaitable[State]]
) -> None:
    """Two hosts start together: one run, both start ready. A later host of the same deployment reports
    that run instead of starting one; a host of the next deployment runs again."""
    documents = _corpus(tmp_path / "docs")

    def startup(deployment: str) -> Callable[[IngestionBuilder], object]:
        return lambda i: i.on_startup().shared_runs(buckets=4, lease_seconds=2, deployment=deployment)

    hosts: list[Host] = [_builder(postgres_dsn, schema, documents, startup("v1")).build() for _ in range(2)]
    try:
        await asyncio.gather(*(host.start() for host in hosts))
        started = [host.services.get(RagIngestionManager).status("docs") for host in hosts]
        late = _builder(postgres_dsn, schema, documents, startup("v1")).build()
        async with late:
            observed = late.services.get(RagIngestionManager).status("docs")
    finally:
        for host in hosts:
            await host.stop()
    ids = {s.last_operation.operation_id for s in (*started, observed) if s.last_operation is not None}
    assert len(ids) == 1
    assert {s.readiness for s in (*started, observed)} == {RagIndexReadiness.READY}
    assert observed.last_operation is not None
    assert observed.last_operation.reason is RagIngestionReason.STARTUP
    runs = await _shared_runs(postgres_dsn, schema)
    assert [(row["state"], row["run_key"]) for row in runs] == [("completed", "deployment:v1")]
    assert await stored_state(schema) == reference

    async with _builder(postgres_dsn, schema, documents, startup("v2")).build() as next_deployment:
        again = next_deployment.services.get(RagIngestionManager).status("docs").last_operation
    assert again is not None
    assert again.operation_id not in ids
    assert again.progress.skipped_documents == DOCUMENTS  # a new run: nothing changed, so nothing re-embedded
    assert len(await _shared_runs(postgres_dsn, schema)) == 2
