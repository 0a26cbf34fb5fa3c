"""The retriever's own CPU per query, on top of its stores: a stub store answers instantly.

    python benchmarks/retriever_overhead.py [--queries N] [--rounds R] [--profile N]

The stub returns 40 precomputed ``StoreHit`` s for each source (half of them shared, like real hybrid
candidates), so what is timed is the query embedding (hashing, 384 dimensions), the lexical query
parse, both source tasks, fusion, provenance and the event: ``RagRetriever``'s own work. CPU time
(``time.process_time``), not wall time, so a busy machine skews it less; the median of ``rounds``.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import dataclasses
import io
import logging
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import structlog

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runiq.hosting import HostBuilder
from runiq.rag import HashingEmbedding, RagQuery, RagRetrievalMode, RagRetriever, add_runiq_rag
from runiq.rag._runtime import IndexRuntime
from runiq.rag._stores.base import StoreHit

INDEX = "overhead"
DEPTH = 40
TOP_K = 10
QUERIES = [
    "What problems and concerns are there in making up descriptive titles?",
    "How can actually pertinent data, as opposed to references or entire articles, be retrieved automatically?",
    "What is information science? Give definitions where possible.",
    "Image recognition and any other methods of automatically transforming printed text into computer-ready form.",
]


def _hits(prefix: str, metric: str, relevance: bool) -> list[StoreHit]:
    return [
        StoreHit(
            document_id=f"doc-{(i if i % 2 == 0 else i + 1000)}" if prefix == "lex" else f"doc-{i}",
            chunk_id="0",
            content="A stored chunk of text about information retrieval. " * 8,
            metadata={},
            raw_score=1.0 - i / 100,
            metric=metric,
            higher_is_better=True,
            relevance=0.9 if relevance else None,
        )
        for i in range(DEPTH)
    ]


class StubStore:
    """Answers every search with the same precomputed hits."""

    store_kind = "stub"

    def __init__(self) -> None:
        self._semantic = _hits("sem", "cosine", True)
        self._lexical = _hits("lex", "bm25", False)

    async def search(self, index_name: str, vector: Any, *, top_k: int, filters: Any = None) -> list[StoreHit]:
        return self._semantic[:top_k]

    async def lexical_search(self, index_name: str, query: Any, *, top_k: int, filters: Any = None) -> list[StoreHit]:
        return self._lexical[:top_k]


async def run(args: argparse.Namespace) -> None:
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))  # as hybrid_latency

    def configure(index: Any) -> None:
        index.use_documents([])
        index.use_in_memory_vector_store()
        index.use_embedding(HashingEmbedding(dimensions=384))

    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(builder, lambda rag: rag.add_index(INDEX, configure))
    async with builder.build() as host:
        runtime = host.services.get(IndexRuntime)
        resources = await runtime.get(INDEX)
        runtime._resources[INDEX] = dataclasses.replace(resources, store=StubStore())
        retriever = host.services.get(RagRetriever)
        queries = [QUERIES[i % len(QUERIES)] for i in range(args.queries)]

        async def once(text: str) -> None:
            await retriever.retrieve(RagQuery(index_name=INDEX, text=text, mode=RagRetrievalMode.HYBRID, top_k=TOP_K))

        for text in queries[:50]:  # warm-up
            await once(text)
        if args.profile:
            profile = cProfile.Profile()
            profile.enable()
            for text in queries[: args.profile]:
                await once(text)
            profile.disable()
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(args.sort).print_stats(40)
            print(out.getvalue())
            return
        per_query = []
        for _ in range(args.rounds):
            began = time.process_time()
            for text in queries:
                await once(text)
            per_query.append((time.process_time() - began) * 1000 / len(queries))
        print(
            f"hybrid retriever CPU per query: median {statistics.median(per_query):.3f} ms "
            f"(rounds: {', '.join(f'{v:.3f}' for v in per_query)})"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--profile", type=int, default=0, help="profile N retrievals instead of timing")
    parser.add_argument("--sort", default="tottime", help="profile order: tottime or cumulative")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
