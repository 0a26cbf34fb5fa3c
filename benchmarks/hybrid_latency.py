"""Hybrid retrieval latency against its two halves, through the public ``RagRetriever``.

    python benchmarks/hybrid_latency.py [--store postgresql|memory] [--rows 100000]
        [--cisi ../shared/data/cisi-beir] [--queries 300] [--repeats 3] [--embedder hashing|minilm]
        [--dim 128] [--batch 10000] [--profile N] [--dsn DSN] [--json FILE]

The rows, host, bulk load and interleaved timing of ``lexical_postgres.py`` (imported), with HNSW over
``HashingEmbedding(dimensions=--dim)`` vectors (``--embedder hashing``: embedding a query costs
about nothing, so the two halves' own work is all there is to overlap), or over all-MiniLM-L6-v2
vectors with each query embedded by the sentence-transformers plugin's packaged model
(``--embedder minilm``: what a user of the model waits for; see ``minilm_rows``). ``--store memory``:
the same rows written through ``InMemoryVectorStore.replace_documents``; no server. Systems, one
query at a time:

* ``runiq_hybrid``: ``RagRetriever.retrieve(RagQuery(mode=HYBRID, top_k=10))`` (each source fetches 40);
* ``lexical@40`` and ``semantic@40``: its halves through the retriever at that depth;
* ``stores_gathered``: the query embedded, then ``store.search`` and ``store.lexical_search`` at depth
  40 gathered directly (no retriever, no fusion).

Besides wall-clock p50s (medians over repeats) the report gives each system's CPU per query: the
client's (``time.process_time``: this process's threads) and the server's (the PostgreSQL server's
processes, from ``/proc``, Linux; read on a local server only), medians of rounds of 50 queries. A
hybrid request cannot finish sooner than the slower half's wall time, nor sooner than its client CPU
(one event loop), nor sooner than its client and server CPU divided by the cores free to run them:
``floor_ms`` gives that bound for 1 and 2 free cores.
``--profile N`` then runs N hybrid retrievals under ``cProfile`` and prints the functions with the
most time of their own.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runiq_postgresql import PostgresVectorStore

from benchmarks._postgres import one_chunk_items, postgres_server, quiesce
from benchmarks.beir_eval import quiet_logging
from benchmarks.lexical_postgres import HYBRID_DEPTH, INDEX, TOP_K, _host, corpus, load, measure, retrieval
from runiq.hosting import HostBuilder
from runiq.rag import HashingEmbedding, RagRetrievalMode, RagRetriever, add_runiq_rag
from runiq.rag._embeddings.hashing import HashingEmbedder
from runiq.rag._lexical import parse_lexical_query
from runiq.rag._runtime import IndexRuntime
from runiq.rag._stores.base import DocumentWrite


def systems(retriever: RagRetriever, store: Any, embed: Callable[[str], Any]) -> dict[str, Any]:
    async def stores_gathered(text: str) -> None:
        vector = await embed(text)
        await asyncio.gather(
            store.search(INDEX, vector, top_k=HYBRID_DEPTH),
            store.lexical_search(INDEX, parse_lexical_query(text), top_k=HYBRID_DEPTH),
        )

    return {
        "runiq_hybrid": retrieval(retriever, RagRetrievalMode.HYBRID, TOP_K),
        "lexical@40": retrieval(retriever, RagRetrievalMode.LEXICAL, HYBRID_DEPTH),
        "semantic@40": retrieval(retriever, RagRetrievalMode.SEMANTIC, HYBRID_DEPTH),
        "stores_gathered": stores_gathered,
    }


def postmaster_of(backend_pid: int) -> int | None:
    """The server's postmaster (the parent of one of its backends); None when ``/proc`` cannot tell."""
    return _parent(backend_pid)


def _stat(pid: int) -> list[str]:
    """Fields of ``/proc/PID/stat`` after the command name (state, ppid, ... utime at [11], stime at [12])."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def _parent(pid: int) -> int | None:
    try:
        return int(_stat(pid)[1])
    except (OSError, IndexError, ValueError):
        return None  # the process ended meanwhile, or no /proc


def server_cpu_seconds(postmaster: int | None) -> float:
    """CPU seconds of the postmaster and its children alive now (found afresh: the pool may reconnect)."""
    if postmaster is None:
        return 0.0
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        try:
            fields = _stat(pid)
            if pid == postmaster or int(fields[1]) == postmaster:
                total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            continue
    return total / os.sysconf("SC_CLK_TCK")


async def cpu_per_query(named: dict[str, Any], queries: list[str], server: int | None) -> dict[str, dict[str, float]]:
    """Median client and server CPU milliseconds per query, per system (interleaved, in rounds of 50:
    the kernel counts CPU in ticks of 10 ms)."""
    client: dict[str, list[float]] = {name: [] for name in named}
    served: dict[str, list[float]] = {name: [] for name in named}
    for start in range(0, len(queries), 50):
        batch = queries[start : start + 50]
        for name, call in named.items():
            began, began_server = time.process_time(), server_cpu_seconds(server)
            for text in batch:
                await call(text)
            client[name].append((time.process_time() - began) * 1000 / len(batch))
            served[name].append((server_cpu_seconds(server) - began_server) * 1000 / len(batch))
    return {
        name: {"client_ms": statistics.median(client[name]), "server_ms": statistics.median(served[name])}
        for name in named
    }


def floors(p50: dict[str, float], cpu: dict[str, dict[str, float]]) -> dict[str, float]:
    """The least hybrid p50 that 1 and 2 free cores allow (see the module docstring)."""
    slower = max(p50["lexical@40"], p50["semantic@40"])
    hybrid = cpu["runiq_hybrid"]
    total = hybrid["client_ms"] + hybrid["server_ms"]
    return {
        "one_core_ms": max(slower, total),
        "two_cores_ms": max(slower, hybrid["client_ms"], total / 2),
    }


async def profiled(call: Callable[[str], Any], queries: list[str], top: int = 30) -> str:
    profile = cProfile.Profile()
    profile.enable()
    for text in queries:
        await call(text)
    profile.disable()
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out).sort_stats("tottime")
    stats.print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)
    return out.getvalue()


async def run(args: argparse.Namespace, dsn: str | None) -> dict[str, Any]:
    quiet_logging()
    ids, texts, questions = corpus(args.cisi, args.rows)
    queries = [questions[i % len(questions)] for i in range(args.queries)]
    report: dict[str, Any] = {"store": args.store, "rows": args.rows, "queries": args.queries}
    report |= {"repeats": args.repeats, "dim": args.dim, "embedder": args.embedder}
    vectors, embedding, plugins = None, None, []
    if args.embedder == "minilm":
        vectors, embedding, plugins = await minilm_rows(args.cisi, len(ids))
        report["dim"] = vectors.shape[1]
    if dsn is None:
        host = _memory_host(args.dim, embedding, plugins)
    else:
        host = _host(dsn, f"hybridbench_{uuid.uuid4().hex[:8]}", args.dim, embedding, plugins)
    async with host:
        resources = await host.services.get(IndexRuntime).get(INDEX)
        store, embedder = resources.store, resources.embedder
        assert embedder is not None
        await store.ensure_index(resources.spec)
        server: int | None = None
        if isinstance(store, PostgresVectorStore):
            await quiesce(dsn)
            report["ingest"] = await load(store, ids, texts, args.dim, args.batch, given=vectors)
            async with store.read_router.connection() as conn:
                server = postmaster_of(await conn.fetchval("SELECT pg_backend_pid()")) if args.dsn is None else None
        else:
            report["ingest"] = await _load_memory(store, ids, texts, args.dim, args.batch, vectors)
        named = systems(host.services.get(RagRetriever), store, embedder.embed_query)
        await measure(named, queries[:50], 1, 0)  # warm-up: caches, plans
        latency = await measure(named, queries, args.repeats, 0)
        p50 = {name: values["p50_ms"] for name, values in latency.items()}
        report["latency"] = latency
        report["cpu_per_query"] = cpu = await cpu_per_query(named, queries, server)
        report["floor_ms"] = floors(p50, cpu)
        report["load_average"] = os.getloadavg()
        slower = max(p50["lexical@40"], p50["semantic@40"])
        report["ratios"] = {
            "hybrid_vs_slower_half": p50["runiq_hybrid"] / slower,
            "stores_gathered_vs_slower_half": p50["stores_gathered"] / slower,
            "hybrid_vs_sum_of_halves": p50["runiq_hybrid"] / (p50["lexical@40"] + p50["semantic@40"]),
        }
        if args.profile:
            print(await profiled(named["runiq_hybrid"], queries[: args.profile]))
    return report


async def minilm_rows(data_dir: Path, rows: int) -> tuple[np.ndarray, Any, list[Any]]:
    """Row vectors for ``--embedder minilm``, with the selection and plugin that embed the queries.

    Row i copies document ``i % N`` of the collection (``corpus``): its all-MiniLM-L6-v2 vector (cached by
    ``postgres_store.cisi_embeddings``), each copy after the first moved by seeded noise of norm 0.3 and
    made unit length again, so copies neither coincide in the HNSW graph nor leave the model's space.
    """
    from runiq_sentence_transformers import SentenceTransformerEmbedding
    from runiq_sentence_transformers import plugin as sentence_transformers

    from benchmarks.postgres_store import cisi_embeddings

    _, _, docs, _, _ = await cisi_embeddings(data_dir)
    index = np.arange(rows)
    vectors = docs[index % len(docs)].astype(np.float32)
    copies = index >= len(docs)
    noise = np.random.default_rng(7).standard_normal((int(copies.sum()), docs.shape[1])).astype(np.float32)
    vectors[copies] += noise * (0.3 / np.sqrt(docs.shape[1]))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors, SentenceTransformerEmbedding(), [sentence_transformers]


def _memory_host(dim: int, embedding: Any, plugins: list[Any]) -> Any:
    def configure(index: Any) -> None:
        index.use_documents([])  # the rows are written through the store, not ingested
        index.use_in_memory_vector_store()
        index.use_embedding(embedding or HashingEmbedding(dimensions=dim))

    builder = HostBuilder(plugins=plugins, load_entry_points=False)
    add_runiq_rag(builder, lambda rag: rag.add_index(INDEX, configure))
    return builder.build()


async def _load_memory(
    store: Any, ids: list[str], texts: list[str], dim: int, batch: int, given: np.ndarray | None
) -> dict[str, float]:
    embedder = HashingEmbedder(dim)
    started = time.perf_counter()
    for start in range(0, len(ids), batch):
        stop = min(start + batch, len(ids))
        if given is not None:
            vectors = given[start:stop]
        else:
            vectors = await asyncio.to_thread(embedder.embed_sync, texts[start:stop])
        items = one_chunk_items(ids[start:stop], texts[start:stop], vectors)
        await store.replace_documents(INDEX, [DocumentWrite(*item) for item in items])
    return {"load_seconds": time.perf_counter() - started}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["postgresql", "memory"], default="postgresql")
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cisi", type=Path, default=Path("../shared/data/cisi-beir"))
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--embedder",
        choices=["hashing", "minilm"],
        default="hashing",
        help="hashing: HashingEmbedding(--dim), nearly free; minilm: the sentence-transformers plugin's "
        "packaged all-MiniLM-L6-v2 embeds each query (the rows: its vectors of the collection's documents)",
    )
    parser.add_argument("--dim", type=int, default=128, help="hashing embedding dimensions")
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--profile", type=int, default=0, help="hybrid retrievals to profile afterwards")
    parser.add_argument("--dsn")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.store == "memory":
        report = asyncio.run(run(args, None))
    else:
        with postgres_server(args.dsn, "runiq-hybridbench-") as dsn:
            report = asyncio.run(run(args, dsn))
    print(json.dumps({k: v for k, v in report.items() if k != "latency"} | {"p50_ms": _p50(report)}, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


def _p50(report: dict[str, Any]) -> dict[str, float]:
    return {name: round(values["p50_ms"], 3) for name, values in report["latency"].items()}


if __name__ == "__main__":
    main()
