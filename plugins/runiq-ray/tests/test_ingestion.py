"""End to end: a host ingests a folder with the embedding stage on Ray, and survives a lost worker."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)

import runiq_ray.plugin
from runiq_ray import RayEmbedding

pytestmark = pytest.mark.usefixtures("ray_cluster")


def _host(folder: Path, embedding: object) -> HostBuilder:
    builder = HostBuilder(load_entry_points=False, plugins=[runiq_ray.plugin])
    add_runiq_rag(
        builder,
        lambda rag: rag.add_index(
            "docs",
            lambda index: index.use_directory(folder, "*.md").use_embedding(embedding).use_in_memory_vector_store(),
        ),
    )
    return builder


def _write(folder: Path, count: int) -> None:
    for i in range(count):
        (folder / f"doc-{i:03}.md").write_text(f"# Policy {i}\n\nRule {i}: badge code BX{i:04} opens door {i % 9}.\n")


async def _ranked(folder: Path, embedding: object) -> list[list[str]]:
    async with _host(folder, embedding).build() as host:
        operation = await host.services.get(RagIngestionManager).run("docs")
        assert operation.state is RagIngestionState.COMPLETED
        retriever = host.services.get(RagRetriever)
        ranked = []
        for text in ("badge code BX0007", "door 4 rule"):
            result = await retriever.retrieve(RagQuery(index_name="docs", text=text, mode=RagRetrievalMode.SEMANTIC))
            ranked.append([hit.document_id for hit in result.hits])
        return ranked


async def test_ingestion_on_ray_ranks_like_the_same_model_in_process(tmp_path: Path) -> None:
    _write(tmp_path, 40)
    inner = HashingEmbedding(dimensions=128)
    on_ray = await _ranked(tmp_path, RayEmbedding(embedding=inner, workers=2, cpus_per_worker=0.5))
    in_process = await _ranked(tmp_path, inner)
    assert on_ray == in_process
    assert all(len(hits) == 5 for hits in on_ray)


def _pool_actors() -> list[object]:
    import ray

    names = [entry["name"] for entry in ray.util.list_named_actors(all_namespaces=True)]
    return [ray.get_actor(name) for name in names if name.startswith("runiq-embedding-")]


async def test_a_worker_killed_mid_run_is_restarted_and_the_run_completes(tmp_path: Path) -> None:
    import ray

    _write(tmp_path, 300)
    builder = _host(tmp_path, RayEmbedding(embedding=HashingEmbedding(), workers=2, cpus_per_worker=0.5))
    async with builder.build() as host:
        manager = host.services.get(RagIngestionManager)
        await manager.start("docs")
        while not (actors := _pool_actors()):  # noqa: ASYNC110 - polling Ray, which has no event to wait on
            await asyncio.sleep(0.02)
        ray.kill(actors[0], no_restart=False)  # the actor restarts once (max_restarts=1); its batch is retried
        operation = await manager.wait("docs")
        assert operation.state is RagIngestionState.COMPLETED, operation.failures
        assert operation.progress.processed_documents == 300
        assert operation.progress.failed_documents == 0
