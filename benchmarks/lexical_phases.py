"""Where a PostgreSQL lexical query's time goes: the postings read, the BM25 scoring, the candidates fetch.

    python benchmarks/lexical_phases.py [--rows 100000] [--cisi ../shared/data/cisi-beir] [--queries 300]
        [--repeats 3] [--batch 10000] [--dsn DSN] [--json FILE]

The rows, host and bulk load of ``lexical_postgres.py`` (``--dim 0``: lexical only), then
``RagRetriever.retrieve(LEXICAL, top_k=10)`` over the collection's questions, one at a time. Each
repeat reports the retriever's p50 and, for the three steps of a free-text query in
``runiq_postgresql.lexical_reads`` (timed by wrapping them, which adds microseconds), the median wall
time and the median CPU time of the thread that ran the step: the postings and statistics read
(``_read_postings``, one statement: the block cache sends only blocks it does not hold), the scoring
(``_ranked``: exact BM25 summed with numpy, in a worker thread above 8,000 postings) and the candidates
fetch (``_best_rows``). Then, over the first 100 questions, the medians of the lexemes, blocks and
postings a query reads.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runiq_postgresql import lexical_reads

from benchmarks._postgres import postgres_server, quiesce
from benchmarks.beir_eval import quiet_logging
from benchmarks.lexical_postgres import INDEX, TOP_K, _host, corpus, load, measure, retrieval
from runiq.rag import RagRetrievalMode, RagRetriever
from runiq.rag._runtime import IndexRuntime

_Times = dict[str, list[tuple[float, float]]]


def timed_steps(times: _Times) -> None:
    """Wrap the three steps so each call records (wall ms, thread CPU ms) under its name."""

    def record(name: str, began: float, cpu: float) -> None:
        times.setdefault(name, []).append(((time.perf_counter() - began) * 1000, (time.thread_time() - cpu) * 1000))

    def wrap_async(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(method)
        async def step(*args: Any, **kwargs: Any) -> Any:
            began, cpu = time.perf_counter(), time.thread_time()
            try:
                return await method(*args, **kwargs)
            finally:
                record(name, began, cpu)

        return step

    def wrap(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def step(*args: Any, **kwargs: Any) -> Any:
            began, cpu = time.perf_counter(), time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                record(name, began, cpu)

        return step

    reader = lexical_reads.LexicalReader
    reader._read_postings = wrap_async("postings_read", reader._read_postings)  # type: ignore[method-assign]
    reader._best_rows = wrap_async("candidates_fetch", reader._best_rows)  # type: ignore[method-assign]
    lexical_reads._ranked = wrap("scoring", lexical_reads._ranked)  # type: ignore[assignment]


def read_sizes(sizes: list[tuple[int, int, int]]) -> None:
    """Record, per free-text query, the lexemes, blocks and postings it reads."""
    reader = lexical_reads.LexicalReader
    inner = reader._read_postings

    async def counted(self: Any, conn: Any, index: Any, terms: Any) -> Any:
        lexemes, read = await inner(self, conn, index, terms)
        sizes.append(
            (len(lexemes), sum(len(row["blocks"]) for row in lexemes), sum(len(p.rows) for p in read.values()))
        )
        return lexemes, read

    reader._read_postings = counted  # type: ignore[method-assign]


async def run(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    quiet_logging()
    ids, texts, questions = corpus(args.cisi, args.rows)
    queries = [questions[i % len(questions)] for i in range(args.queries)]
    report: dict[str, Any] = {"rows": args.rows, "queries": args.queries, "repeats": []}
    async with _host(dsn, f"phases_{uuid.uuid4().hex[:8]}", 0) as host:
        resources = await host.services.get(IndexRuntime).get(INDEX)
        await resources.store.ensure_index(resources.spec)
        await quiesce(dsn)
        report["ingest"] = await load(resources.store, ids, texts, 0, args.batch)
        call = retrieval(host.services.get(RagRetriever), RagRetrievalMode.LEXICAL, TOP_K)
        await measure({"lexical": call}, queries[:50], 1, 0)  # warm-up: block cache, plans
        times: _Times = {}
        timed_steps(times)
        for r in range(args.repeats):
            times.clear()
            p50 = (await measure({"lexical": call}, queries, 1, 0))["lexical"]["p50_ms"]
            steps = {
                name: {
                    "wall_ms": statistics.median(wall for wall, _ in values),
                    "cpu_ms": statistics.median(cpu for _, cpu in values),
                }
                for name, values in times.items()
            }
            report["repeats"].append({"p50_ms": p50, "steps": steps})
            shown = ", ".join(f"{n} {s['wall_ms']:.2f} ms ({s['cpu_ms']:.2f} CPU)" for n, s in steps.items())
            print(f"repeat {r + 1}/{args.repeats}: p50 {p50:.2f} ms; {shown}", file=sys.stderr, flush=True)
        sizes: list[tuple[int, int, int]] = []
        read_sizes(sizes)
        for text in queries[:100]:
            await call(text)
        report["per_query"] = {
            name: statistics.median(size[i] for size in sizes)
            for i, name in enumerate(("lexemes", "blocks", "postings"))
        }
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--cisi", type=Path, default=Path("../shared/data/cisi-beir"))
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--dsn")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    with postgres_server(args.dsn, "runiq-phases-") as dsn:
        report = asyncio.run(run(args, dsn))
    print(json.dumps({k: v for k, v in report.items() if k != "repeats"} | {"last": report["repeats"][-1]}, indent=2))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
