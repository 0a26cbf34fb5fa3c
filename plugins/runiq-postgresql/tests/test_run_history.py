"""Finished runs persist with the index: a restarted host (or another replica) sees them, failures included."""

from __future__ import annotations

from pathlib import Path

import runiq_postgresql.plugin
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    RagIndexReadiness,
    RagIngestionManager,
    RagIngestionState,
    add_runiq_rag,
)
from runiq.rag._stores import StoreHealth
from runiq.rag.testing import CANARY


def _host(postgres_dsn: str, schema: str, documents: Path) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: (
                index.use_directory(documents, "*.md")
                .use_embedding(HashingEmbedding())
                .use_vector_store("postgresql", dsn=postgres_dsn, schema=schema)
            ),
        ),
    )
    return builder


async def test_runs_and_their_failed_documents_survive_a_restart(
    postgres_dsn: str, schema: str, tmp_path: Path
) -> None:
    (tmp_path / "good.md").write_text(f"Alpha text {CANARY}.")
    (tmp_path / "bad.md").write_bytes(b"\xff\xfe\x00bad \xc3\x28")
    async with _host(postgres_dsn, schema, tmp_path).build() as host:
        manager = host.services.get(RagIngestionManager)
        first = await manager.run("docs")
        (tmp_path / "bad.md").unlink()
        second = await manager.run("docs")
    assert first.state is RagIngestionState.PARTIALLY_COMPLETED
    assert second.state is RagIngestionState.COMPLETED

    async with _host(postgres_dsn, schema, tmp_path).build() as restarted:
        manager = restarted.services.get(RagIngestionManager)
        history = await manager.history("docs")
        status = await manager.inspect("docs")
        health = await manager.health("docs")
    assert [op.operation_id for op in history] == [second.operation_id, first.operation_id]
    assert history[1] == first  # counters, failures and timestamps round-trip exactly
    assert [(f.document_id, f.code) for f in history[1].failures] == [("bad.md", "undecodable")]
    assert status.last_operation == second
    assert status.readiness is RagIndexReadiness.READY
    assert health == StoreHealth(healthy=True)
    assert CANARY not in repr(history)
