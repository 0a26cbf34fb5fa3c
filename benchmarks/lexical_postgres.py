"""PostgreSQL lexical retrieval at corpus scale, against in-memory bm25s and a LlamaIndex-style query.

    python benchmarks/lexical_postgres.py [--rows 100000] [--cisi ../shared/data/cisi-beir]
        [--queries 1000] [--repeats 3] [--baseline-queries 100] [--concurrency 50] [--dim 128 | --dim 0]
        [--batch 10000] [--dsn DSN] [--json FILE]

Rows: the BEIR collection's documents (``title\\n\\ntext``) repeated up to ``--rows`` chunks, each copy
after the first keeping a random 80% of its words (``_corpus.repeated``: copies do not tie).
Queries: the collection's questions (all of ``queries.jsonl``) cycled up to ``--queries``.

Systems, all on the same rows and queries, one query at a time, top 10:

* ``runiq_lexical``: ``RagRetriever.retrieve(RagQuery(mode=LEXICAL))`` on an index whose store is
  ``PostgresVectorStore`` (the public API, retriever overhead included), and ``store_lexical``: the
  store's ``lexical_search`` alone (what the retriever calls).
* ``bm25s``: in-memory bm25s (``bm25s.tokenize`` + ``BM25.retrieve``, one thread), indexed on the same
  texts in this process.
* ``llamaindex_style``: LlamaIndex's default sparse query shape on the same server and chunk table:
  ``ts_rank`` over an OR tsquery of the query's terms, ``WHERE lexemes @@ tsquery`` served by the same
  GIN index, ``ORDER BY rank DESC LIMIT 10``, the tsquery inlined so each query is planned afresh;
  on the first ``--baseline-queries`` queries only (it takes seconds per query at 1M rows).
* with ``--dim > 0`` (hashing embeddings, HNSW built after the load): ``runiq_hybrid`` (HYBRID, top 10:
  each source fetches 40) and its two halves at that depth, ``lexical@40`` and ``semantic@40``.

Every repeat runs each query through every system in an order that rotates from query to query;
p50/p95 are per repeat, and the report gives their medians over repeats, with ratios. Then
``--concurrency`` lexical retrievals at once (errors counted), and the bulk load's rows/s (inside
``store.bulk_load``, batches of ``--batch``), with the index builds at its end timed apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import asyncpg
import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runiq_postgresql import PostgresVectorStorage, PostgresVectorStore
from runiq_postgresql.lexical import query_terms, quote_lexeme

from benchmarks._beir import load_beir
from benchmarks._corpus import repeated
from benchmarks._postgres import one_chunk_items, postgres_server, quiesce
from benchmarks.beir_eval import quiet_logging
from runiq.hosting import HostBuilder
from runiq.rag import (
    HashingEmbedding,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._embeddings.hashing import HashingEmbedder
from runiq.rag._lexical import DEFAULT_ANALYZER, analyse_query, parse_lexical_query
from runiq.rag._runtime import IndexRuntime

INDEX = "cisi"
TOP_K = 10
HYBRID_DEPTH = 40  # RetrievalOptions.hybrid_candidate_multiplier (4) * TOP_K


def corpus(data_dir: Path, rows: int) -> tuple[list[str], list[str], list[str]]:
    """Chunk ids, texts (documents repeated with word dropout) and every query text of the collection."""
    collection = load_beir(data_dir)
    doc_ids = list(collection.corpus)
    ids, body = repeated(doc_ids, [collection.document_text(d) for d in doc_ids], rows)
    with (data_dir / "queries.jsonl").open(encoding="utf-8") as handle:
        questions = [json.loads(line)["text"] for line in handle if line.strip()]
    return ids, body, questions


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000.0 if values else float("nan")


# -- loading ---------------------------------------------------------------------------------------


async def load(
    store: PostgresVectorStore,
    ids: list[str],
    texts: list[str],
    dim: int,
    batch: int,
    metadata: list[dict[str, Any]] | None = None,
    given: np.ndarray | None = None,
) -> dict[str, float]:
    """Bulk load through the store (``metadata[i]`` on chunk i when given); the index builds at the end
    of ``bulk_load`` are timed apart. Vectors: row i of ``given``, else ``HashingEmbedder(dim)``'s (none
    when ``dim`` is 0)."""
    embedder = HashingEmbedder(dim) if dim and given is None else None
    started = time.perf_counter()
    async with store.bulk_load(INDEX):
        for start in range(0, len(ids), batch):
            stop = min(start + batch, len(ids))
            vectors = given[start:stop] if given is not None else None
            if embedder is not None:
                vectors = await asyncio.to_thread(embedder.embed_sync, texts[start:stop])
            meta = None if metadata is None else metadata[start:stop]
            await store.replace_documents(INDEX, one_chunk_items(ids[start:stop], texts[start:stop], vectors, meta))
        loaded = time.perf_counter()
    finished = time.perf_counter()
    return {
        "load_seconds": loaded - started,
        "load_rows_per_s": len(ids) / (loaded - started),
        "index_build_seconds": finished - loaded,
    }


# -- systems ---------------------------------------------------------------------------------------


def bm25s_system(texts: list[str]) -> Callable[[str], None]:
    import bm25s

    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, show_progress=False), show_progress=False)

    def search(text: str) -> None:
        tokens = bm25s.tokenize([text], show_progress=False)
        retriever.retrieve(tokens, k=TOP_K, show_progress=False, n_threads=1)

    return search


def llamaindex_sql(table: str, text: str) -> str | None:
    """LlamaIndex's sparse query shape over the store's tsvector column, tsquery inlined (planned per query)."""
    terms = query_terms(analyse_query(parse_lexical_query(text), DEFAULT_ANALYZER)).terms
    if not terms:
        return None
    literal = " | ".join(quote_lexeme(t) for t in terms).replace("'", "''")
    return (
        f"SELECT document_id, chunk_id, content, metadata::text AS metadata, "
        f"ts_rank(lexemes, '{literal}'::tsquery) AS rank FROM {table} "
        f"WHERE lexemes @@ '{literal}'::tsquery ORDER BY rank DESC LIMIT {TOP_K}"
    )


def retrieval(
    retriever: RagRetriever, mode: RagRetrievalMode, top_k: int, filters: dict[str, Any] | None = None
) -> Callable[[str], Awaitable[Any]]:
    async def run(text: str) -> Any:
        return await retriever.retrieve(RagQuery(index_name=INDEX, text=text, mode=mode, top_k=top_k, filters=filters))

    return run


async def timed(call: Callable[[str], Any], text: str) -> float:
    started = time.perf_counter()
    result = call(text)
    if asyncio.iscoroutine(result):
        await result
    return time.perf_counter() - started


async def measure(
    systems: dict[str, Callable[[str], Any]], queries: list[str], repeats: int, baseline_queries: int
) -> dict[str, dict[str, float]]:
    """Interleaved: per query every system once, in an order that rotates; p50/p95 medians over repeats."""
    names = list(systems)
    per_repeat: dict[str, list[tuple[float, float]]] = {name: [] for name in names}
    for repeat in range(repeats):
        times: dict[str, list[float]] = {name: [] for name in names}
        for qi, text in enumerate(queries):
            shift = (qi + repeat) % len(names)
            for name in names[shift:] + names[:shift]:
                if name == "llamaindex_style" and qi >= baseline_queries:
                    continue
                times[name].append(await timed(systems[name], text))
        for name, values in times.items():
            per_repeat[name].append((percentile(values, 50), percentile(values, 95)))
        print(f"repeat {repeat + 1}/{repeats}: " + ", ".join(f"{n} {t[-1][0]:.2f}" for n, t in per_repeat.items()))
    return {
        name: {
            "p50_ms": statistics.median(p50 for p50, _ in values),
            "p95_ms": statistics.median(p95 for _, p95 in values),
            "p50_ms_per_repeat": [p50 for p50, _ in values],
        }
        for name, values in per_repeat.items()
    }


async def concurrent(run: Callable[[str], Awaitable[Any]], queries: list[str], n: int) -> dict[str, float]:
    async def one(text: str) -> float:
        started = time.perf_counter()
        await run(text)
        return time.perf_counter() - started

    started = time.perf_counter()
    outcomes = await asyncio.gather(*(one(queries[i % len(queries)]) for i in range(n)), return_exceptions=True)
    wall = time.perf_counter() - started
    latencies = [o for o in outcomes if isinstance(o, float)]
    return {
        "queries": n,
        "errors": n - len(latencies),
        "wall_seconds": wall,
        "p50_ms": percentile(latencies, 50),
        "max_ms": max(latencies) * 1000.0 if latencies else float("nan"),
    }


# -- run -------------------------------------------------------------------------------------------


def _host(dsn: str, schema: str, dim: int, embedding: Any = None, plugins: Sequence[Any] = ()) -> Any:
    """A host whose index ``INDEX`` is on this server's ``schema``: embedded by ``embedding`` (a selection
    whose provider one of ``plugins`` registers), else by ``HashingEmbedding(dim)``, else lexical only."""

    def configure(index: Any) -> None:
        index.use_documents([])  # a source is required; the rows are loaded through the store, not ingested
        index.use_vector_store(PostgresVectorStorage(dsn=dsn, schema=schema, options={"ann_min_rows": 1000}))
        if embedding is not None:
            index.use_embedding(embedding)
        elif dim:
            index.use_embedding(HashingEmbedding(dimensions=dim))
        else:
            index.use_default_mode(RagRetrievalMode.LEXICAL)

    from runiq_postgresql import plugin

    builder = HostBuilder(plugins=[plugin, *plugins], load_entry_points=False)  # these plugins only, from this checkout
    add_runiq_rag(builder, lambda rag: rag.add_index(INDEX, configure))
    return builder.build()


def _ratios(results: dict[str, dict[str, float]]) -> dict[str, float]:
    p50 = {name: r["p50_ms"] for name, r in results.items()}
    out = {
        "runiq_lexical_vs_bm25s": p50["runiq_lexical"] / p50["bm25s"],
        "store_lexical_vs_bm25s": p50["store_lexical"] / p50["bm25s"],
        "runiq_lexical_vs_llamaindex_style": p50["runiq_lexical"] / p50["llamaindex_style"],
    }
    if "runiq_hybrid" in p50:
        out["hybrid_vs_max_of_halves"] = p50["runiq_hybrid"] / max(p50["lexical@40"], p50["semantic@40"])
    return out


def _systems(
    store: PostgresVectorStore,
    retriever: RagRetriever,
    baseline: asyncpg.Connection,
    table: str,
    texts: list[str],
    dim: int,
) -> dict[str, Callable[[str], Any]]:
    async def llamaindex(text: str) -> None:
        sql = llamaindex_sql(table, text)
        if sql is not None:
            await baseline.fetch(sql)

    async def store_lexical(text: str) -> None:
        await store.lexical_search(INDEX, parse_lexical_query(text), top_k=TOP_K)

    systems: dict[str, Callable[[str], Any]] = {
        "runiq_lexical": retrieval(retriever, RagRetrievalMode.LEXICAL, TOP_K),
        "store_lexical": store_lexical,
        "bm25s": bm25s_system(texts),
        "llamaindex_style": llamaindex,
    }
    if dim:
        systems["runiq_hybrid"] = retrieval(retriever, RagRetrievalMode.HYBRID, TOP_K)
        systems["lexical@40"] = retrieval(retriever, RagRetrievalMode.LEXICAL, HYBRID_DEPTH)
        systems["semantic@40"] = retrieval(retriever, RagRetrievalMode.SEMANTIC, HYBRID_DEPTH)
    return systems


async def run(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    quiet_logging()
    ids, texts, questions = corpus(args.cisi, args.rows)
    queries = [questions[i % len(questions)] for i in range(args.queries)]
    schema = f"lexbench_{uuid.uuid4().hex[:8]}"
    report: dict[str, Any] = {"rows": args.rows, "queries": args.queries, "repeats": args.repeats, "dim": args.dim}
    async with _host(dsn, schema, args.dim) as host:
        resources = await host.services.get(IndexRuntime).get(INDEX)
        store = resources.store
        assert isinstance(store, PostgresVectorStore)
        await store.ensure_index(resources.spec)
        await quiesce(dsn)
        report["ingest"] = await load(store, ids, texts, args.dim, args.batch)
        print(f"loaded: {report['ingest']}")
        table = (await store._require(INDEX)).sql.table
        retriever = host.services.get(RagRetriever)
        baseline = await asyncpg.connect(dsn, statement_cache_size=0)  # no plan reuse: each query planned
        try:
            systems = _systems(store, retriever, baseline, table, texts, args.dim)
            await measure(systems, queries[:50], 1, 5)  # warm-up: caches, plans, the bm25s arrays
            report["latency"] = await measure(systems, queries, args.repeats, args.baseline_queries)
            report["ratios"] = _ratios(report["latency"])
            lexical = retrieval(retriever, RagRetrievalMode.LEXICAL, TOP_K)
            report["concurrent_lexical"] = await concurrent(lexical, queries, args.concurrency)
        finally:
            await baseline.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cisi", type=Path, default=Path("../shared/data/cisi-beir"))
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-queries", type=int, default=100, help="queries the LlamaIndex-style query runs")
    parser.add_argument("--concurrency", type=int, default=50)
    parser.add_argument("--dim", type=int, default=128, help="hashing embedding dimensions; 0: lexical only")
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--dsn")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with postgres_server(args.dsn, "runiq-lexbench-") as dsn:
        report = asyncio.run(run(args, dsn))
    print(json.dumps(report, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
