"""When does embedding on Ray pay? Coordination cost per batch, and MiniLM ingestion in process vs on Ray.

    python plugins/runiq-ray/benchmarks/ray_embedding.py [--docs N] [--repeats R] [--workers W]

1. Coordination: ``embed`` of batches of 32 texts, one at a time, with the hashing embedder in
   process and the same embedder behind a pool of Ray actors: milliseconds per batch (median).
2. Ingestion through ``RagIngestionManager`` over a folder of CISI documents (one file each, default
   chunking, in-memory store) with all-MiniLM-L6-v2 in process vs on W Ray actors of one CPU each;
   repeats interleaved, chunks/s medians and the ratio. Each run includes opening the provider
   (loading the model once in process, once per actor on Ray), as a user's run does.

Ray runs on this machine (``ray.init(num_cpus=W)``); on a cluster, the same code adds machines.
Never part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import ray
from runiq.hosting import HostBuilder
from runiq.rag import HashingEmbedding, RagIngestionManager, RagIngestionState, add_runiq_rag
from runiq.rag.providers import EmbeddingInputKind, HashingEmbedder

from runiq_ray import RayEmbedding, open_ray_embedder

# ../shared beside the checkout (a worktree two levels down finds it too).
DEFAULT_CORPUS = next(
    (
        found
        for parent in Path(__file__).resolve().parents
        if (found := parent / "shared" / "data" / "cisi-beir" / "corpus.jsonl").exists()
    ),
    Path("../shared/data/cisi-beir/corpus.jsonl"),
)


async def _coordination(workers: int, batches: int) -> tuple[float, float]:
    texts = [f"text {i} about a library catalogue and its subject headings" for i in range(32)]
    local = HashingEmbedder(384)
    started = time.perf_counter()
    for _ in range(batches):
        await local.embed(texts, EmbeddingInputKind.DOCUMENT)
    in_process = (time.perf_counter() - started) / batches * 1000
    options = RayEmbedding(embedding=HashingEmbedding(dimensions=384), workers=workers).options()
    async with open_ray_embedder(options) as embedder:
        await embedder.embed(texts, EmbeddingInputKind.DOCUMENT)
        started = time.perf_counter()
        for _ in range(batches):
            await embedder.embed(texts, EmbeddingInputKind.DOCUMENT)
        on_ray = (time.perf_counter() - started) / batches * 1000
    return in_process, on_ray


def _write_corpus(corpus: Path, folder: Path, limit: int) -> None:
    with corpus.open(encoding="utf-8") as lines:
        for count, line in enumerate(lines):
            if count >= limit:
                break
            row = json.loads(line)
            (folder / f"{row['_id']}.md").write_text(f"# {row.get('title', '')}\n\n{row['text']}\n", encoding="utf-8")


async def _ingest(folder: Path, embedding: object) -> tuple[float, int]:
    builder = HostBuilder(load_entry_points=True, plugins=[])

    def configure(index: Any) -> Any:
        return index.use_directory(folder, "*.md").use_embedding(embedding).use_in_memory_vector_store()

    add_runiq_rag(builder, lambda rag: rag.add_index("cisi", configure))
    async with builder.build() as host:
        started = time.perf_counter()
        operation = await host.services.get(RagIngestionManager).run("cisi")
        elapsed = time.perf_counter() - started
    assert operation.state is RagIngestionState.COMPLETED, operation.failures
    return elapsed, operation.progress.produced_chunks


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--docs", type=int, default=1460)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batches", type=int, default=300)
    args = parser.parse_args()
    from runiq_sentence_transformers import SentenceTransformerEmbedding

    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        local_ms, ray_ms = await _coordination(args.workers, args.batches)
        print(
            f"coordination: batch of 32 in process {local_ms:.3f} ms, on Ray {ray_ms:.3f} ms "
            f"(+{ray_ms - local_ms:.3f} ms per batch)"
        )
        runs: dict[str, list[float]] = {"in-process": [], "ray": []}
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            _write_corpus(args.corpus, folder, args.docs)
            inner = SentenceTransformerEmbedding()
            selections = {
                "in-process": inner,
                "ray": RayEmbedding(embedding=inner, workers=args.workers, cpus_per_worker=1.0),
            }
            for repeat in range(args.repeats):
                for name, selection in selections.items():
                    elapsed, chunks = await _ingest(folder, selection)
                    runs[name].append(chunks / elapsed)
                    rate = chunks / elapsed
                    print(f"repeat {repeat}: {name:10} {chunks} chunks in {elapsed:.1f} s = {rate:.1f} chunks/s")
        medians = {name: statistics.median(values) for name, values in runs.items()}
        ratios = [r / p for r, p in zip(runs["ray"], runs["in-process"], strict=True)]
        print(
            json.dumps(
                {
                    "chunks_per_s": medians,
                    "ray_vs_in_process": statistics.median(ratios),
                    "coordination_ms_per_batch": ray_ms - local_ms,
                    "workers": args.workers,
                },
                indent=2,
            )
        )
    finally:
        ray.shutdown()


if __name__ == "__main__":
    asyncio.run(main())
