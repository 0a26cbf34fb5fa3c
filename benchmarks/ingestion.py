"""Ingestion benchmark: first ingestion vs unchanged re-ingestion, and concurrent start conflicts.

    python benchmarks/ingestion.py ../shared/data/cisi-beir [--store memory|postgresql] [--repeats 3]

Reports, per repeat and as medians: the first ingestion's time and embedding calls, the re-ingestion's
time and embedding calls (must be zero: every document is unchanged), their ratio, and how many of 50
concurrent ``start`` calls produced a run (must be one) versus a conflict (must be 49).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._beir import load_beir
from runiq.hosting import HostBuilder
from runiq.logging import configure_logging
from runiq.rag import (
    HashingEmbedding,
    IngestionConflictError,
    RagDocument,
    RagIngestionManager,
    add_runiq_rag,
)
from runiq.settings import LoggingSettings


def _builder(documents: list[RagDocument], store: str) -> HostBuilder:
    builder = HostBuilder(load_entry_points=store != "memory")

    def configure(index):  # type: ignore[no-untyped-def]
        index.use_documents(documents).use_embedding(HashingEmbedding()).configure_chunking(
            max_characters=20_000, overlap=0
        )
        if store == "memory":
            index.use_in_memory_vector_store()
        else:
            index.use_vector_store("postgresql")

    add_runiq_rag(builder, lambda rag: rag.add_index("bench", configure))
    return builder


async def _one(documents: list[RagDocument], store: str) -> dict[str, float]:
    async with _builder(documents, store).build() as host:
        manager = host.services.get(RagIngestionManager)
        started = time.perf_counter()
        first = await manager.run("bench")
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        second = await manager.run("bench")
        second_s = time.perf_counter() - started
        outcomes = await asyncio.gather(*(manager.start("bench") for _ in range(50)), return_exceptions=True)
        runs = sum(1 for o in outcomes if not isinstance(o, BaseException))
        conflicts = sum(1 for o in outcomes if isinstance(o, IngestionConflictError))
        await manager.wait("bench")
    return {
        "first_seconds": first_s,
        "first_embedding_calls": first.progress.embedding_calls,
        "first_added": first.progress.added_documents,
        "reingest_seconds": second_s,
        "reingest_embedding_calls": second.progress.embedding_calls,
        "reingest_skipped": second.progress.skipped_documents,
        "speedup": first_s / second_s if second_s else float("inf"),
        "concurrent_runs": runs,
        "concurrent_conflicts": conflicts,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--store", choices=["memory", "postgresql"], default="memory")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    configure_logging(LoggingSettings(level="warning"))
    collection = load_beir(args.data_dir)
    documents = [
        RagDocument(document_id=doc_id, content=collection.document_text(doc_id)) for doc_id in collection.corpus
    ]
    results = [asyncio.run(_one(documents, args.store)) for _ in range(args.repeats)]
    medians = {key: statistics.median(r[key] for r in results) for key in results[0]}
    for key, value in medians.items():
        print(f"{key:>26}: {value:,.4g}")
    if args.json:
        args.json.write_text(json.dumps({"repeats": results, "medians": medians}, indent=2))


if __name__ == "__main__":
    main()
