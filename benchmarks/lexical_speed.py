"""In-memory lexical retrieval at corpus scale: runiq's BM25 through the public API against bm25s.

    python benchmarks/lexical_speed.py ../shared/data/cisi-beir [--rows 100000] [--rows 1000000]
        [--queries 1000] [--repeats 3] [--top-k 10] [--json FILE]

The collection's documents are repeated up to ``--rows`` chunks, each copy after the first keeping a
random 80% of its words (``_corpus.repeat_with_dropout``, the rule of ``postgres_store.py --cisi``),
and queried with its questions (all of ``queries.jsonl``, double quotes removed, cycled up to
``--queries``), top-k, one query at a time. Systems:

* ``runiq retriever``: ``HostBuilder`` + ``add_runiq_rag``, ``use_documents`` (an ``InMemorySource``),
  one chunk per document, ``use_in_memory_vector_store()`` (its default analyzer: English stop
  words), a lexical-only index ingested by ``RagIngestionManager.run``; a query is
  ``await RagRetriever.retrieve(RagQuery(..., mode=LEXICAL, top_k=k))``.
* ``runiq store``: the same index through ``store.lexical_search`` (no retriever: its fixed cost).
* ``bm25s``: ``bm25s.tokenize(texts, stopwords=...)`` then ``BM25().index``; a query is
  ``bm25s.tokenize([text])`` filtered to the vocabulary and ``retrieve(k=k, n_threads=1)``, with
  bm25s's English stop words and with runiq's list (``runiq.rag._lexical.ENGLISH_STOPWORDS``).

Per size: queries/s (queries / summed latency) and p50/p95 per query, medians over ``--repeats``
repeats; each question goes to every system in turn, in an order that rotates, so load from other
processes falls on all systems alike. Index RSS growth with every system in a fresh
subprocess (texts loaded first, growth read after the build and again after the query set, after
``gc.collect()`` and glibc ``malloc_trim``; ``runiq engine`` is the bare ``BM25Index`` fed the same
texts, without the store's chunk copies); top-k agreement with exact BM25 (an independent float64
evaluation from a scipy matrix of the analyzer's term counts, ties by ``(document_id, chunk_id)``); one
``replace_document`` on the full index and the first query after it (caches cold). Once:
``--concurrent`` lexical retrievals started together over ``--concurrent-rows`` chunks (p50
latency, wall time, the event loop's longest stall).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import json
import os
import subprocess
import sys
import time
from array import array
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._corpus import load_questions, repeat_with_dropout
from benchmarks.beir_eval import quiet_logging
from runiq.hosting import HostBuilder
from runiq.rag import RagDocument, RagIngestionManager, RagQuery, RagRetrievalMode, RagRetriever, add_runiq_rag
from runiq.rag._lexical import (
    ENGLISH_STOPWORDS,
    BM25Index,
    BM25Parameters,
    LexicalOptions,
    bm25_idf,
    bm25_length_norm,
    bm25_term_score,
)
from runiq.rag._lexical.query import MAX_QUERY_TERMS
from runiq.rag._runtime import IndexRuntime
from runiq.rag.providers import InMemoryVectorStore, StoredDocument, parse_lexical_query
from runiq.rag.testing import make_chunks

INDEX = "lexical-speed"
SPEED_SYSTEMS = ("runiq retriever", "runiq store", "bm25s stopwords=en", "bm25s stopwords=runiq")
MEMORY_SYSTEMS = ("runiq retriever", "runiq engine", "bm25s stopwords=en", "bm25s stopwords=runiq")
Query = Callable[[str], Awaitable[list[str]]]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def rss() -> int:
    """Resident bytes, after returning freed memory to the system."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


# -- the systems --------------------------------------------------------------------------------------


async def open_runiq(ids: Sequence[str], texts: Sequence[str], stack: contextlib.AsyncExitStack) -> Any:
    """A lexical-only in-memory index built through the public API: the started host."""
    documents = [RagDocument(document_id=i, content=t) for i, t in zip(ids, texts, strict=True)]
    longest = max(len(t) for t in texts)

    def configure(index: Any) -> None:
        index.use_documents(documents).configure_chunking(max_characters=longest + 1, overlap=0)
        index.use_default_mode(RagRetrievalMode.LEXICAL).use_in_memory_vector_store()

    builder = HostBuilder(load_entry_points=False)
    add_runiq_rag(builder, lambda rag: rag.add_index(INDEX, configure))
    host = await stack.enter_async_context(builder.build())
    operation = await host.services.get(RagIngestionManager).run(INDEX)
    if operation.progress.produced_chunks != len(texts):
        raise RuntimeError("expected exactly one chunk per document")
    return host


async def runiq_store(host: Any) -> InMemoryVectorStore:
    store = (await host.services.get(IndexRuntime).get(INDEX)).store
    assert isinstance(store, InMemoryVectorStore)
    return store


def runiq_queries(host: Any, store: InMemoryVectorStore, k: int) -> dict[str, Query]:
    retriever = host.services.get(RagRetriever)

    async def via_retriever(text: str) -> list[str]:
        query = RagQuery(index_name=INDEX, text=text, mode=RagRetrievalMode.LEXICAL, top_k=k)
        return [hit.document_id for hit in (await retriever.retrieve(query)).hits]

    async def via_store(text: str) -> list[str]:
        return [hit.document_id for hit in await store.lexical_search(INDEX, parse_lexical_query(text), top_k=k)]

    return {"runiq retriever": via_retriever, "runiq store": via_store}


def bm25s_stopwords(variant: str) -> Any:
    return "en" if variant.endswith("=en") else sorted(ENGLISH_STOPWORDS)


def open_bm25s(texts: Sequence[str], variant: str) -> Any:
    import bm25s

    tokens = bm25s.tokenize(list(texts), stopwords=bm25s_stopwords(variant), show_progress=False)
    model = bm25s.BM25()
    model.index(tokens, show_progress=False)
    return model


def bm25s_query(model: Any, variant: str, ids: Sequence[str], k: int) -> Query:
    import bm25s

    stopwords = bm25s_stopwords(variant)

    async def query(text: str) -> list[str]:
        tokens = bm25s.tokenize([text], stopwords=stopwords, return_ids=False, show_progress=False)[0]
        tokens = [t for t in tokens if t in model.vocab_dict]
        if not tokens:
            return []
        ranked, scores = model.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        return [ids[int(i)] for i, s in zip(ranked[0], scores[0], strict=True) if s > 0]

    return query


# -- exact BM25, independently --------------------------------------------------------------------------


class ExactBM25:
    """The formula evaluated in float64 from a CSC matrix of the analyzer's term counts, built in one
    pass over the texts: no postings lists, tombstones, caches or incremental state."""

    def __init__(self, texts: Sequence[str]) -> None:
        from scipy import sparse

        self.analyzer = LexicalOptions().analyzer()  # the in-memory store's default
        self.vocabulary: dict[str, int] = {}
        terms, counts, starts, lengths = array("i"), array("H"), array("q", [0]), array("i")
        for text in texts:
            indexed = self.analyzer.indexed(text)
            lengths.append(indexed.length)
            for term, tf in indexed.counts.items():
                terms.append(self.vocabulary.setdefault(term, len(self.vocabulary)))
                counts.append(tf)
            starts.append(len(terms))
        shape = (len(texts), len(self.vocabulary))
        self.matrix = sparse.csr_matrix((np.frombuffer(counts, np.uint16), terms, starts), shape=shape).tocsc()
        self.lengths = np.maximum(np.frombuffer(lengths, np.int32), 1).astype(np.float64)
        total = int(np.frombuffer(lengths, np.int32).sum())
        self.average = total / len(texts) if total else 1.0

    def top(self, text: str, ids: Sequence[str], k: int) -> list[str]:
        n = self.matrix.shape[0]
        scores = np.zeros(n)
        for term, qtf in Counter(self.analyzer.query_terms(text)[:MAX_QUERY_TERMS]).items():
            column = self.vocabulary.get(term)
            if column is None:
                continue
            start, end = self.matrix.indptr[column], self.matrix.indptr[column + 1]
            rows, tfs = self.matrix.indices[start:end], self.matrix.data[start:end]
            norms = bm25_length_norm(self.lengths[rows], self.average, BM25Parameters())
            scores[rows] += qtf * bm25_term_score(bm25_idf(n, int(end - start)), tfs, norms)
        positive = np.flatnonzero(scores > 0)
        if positive.size > k:
            kth = np.partition(scores[positive], positive.size - k)[positive.size - k]
            positive = positive[scores[positive] >= kth]
        ranked = sorted(positive.tolist(), key=lambda row: (-scores[row], ids[row]))  # one chunk per document
        return [ids[row] for row in ranked[:k]]


async def agreement(query: Query, texts: Sequence[str], ids: Sequence[str], questions: Sequence[str], k: int) -> dict:
    started = time.perf_counter()
    exact = ExactBM25(texts)
    log(f"  exact BM25 reference built in {time.perf_counter() - started:.0f} s")
    unique = list(dict.fromkeys(questions))
    identical, overlap = 0, 0.0
    for text in unique:
        got, expected = await query(text), exact.top(text, ids, k)
        identical += got == expected
        overlap += len(set(got) & set(expected)) / max(len(expected), 1)
    return {"queries": len(unique), "identical_top_k": identical, "mean_overlap": overlap / len(unique)}


# -- measurements ---------------------------------------------------------------------------------------


async def interleaved(systems: dict[str, Query], questions: Sequence[str], repeats: int) -> dict[str, Any]:
    """Every question goes to every system in turn (the order rotates with each question and repeat), so
    load from other processes falls on all systems alike; per repeat and system: p50, p95 and
    queries/s (questions / summed latency), reported as medians over the repeats."""
    names = list(systems)
    for name in names:
        await systems[name](questions[0])  # untimed
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in names}
    for repeat in range(repeats):
        latencies: dict[str, list[float]] = {name: [] for name in names}
        for i, text in enumerate(questions):
            shift = (i + repeat) % len(names)
            for name in names[shift:] + names[:shift]:
                begin = time.perf_counter()
                await systems[name](text)
                latencies[name].append(time.perf_counter() - begin)
        for name, values in latencies.items():
            runs[name].append(_summary(values))
        log(f"  repeat {repeat + 1}: " + ", ".join(f"{n} {runs[n][-1]['qps']:.0f} q/s" for n in names))
    return {
        name: {key: float(np.median([run[key] for run in done])) for key in ("qps", "p50_ms", "p95_ms")}
        | {"runs": done}
        for name, done in runs.items()
    }


def _summary(latencies: Sequence[float]) -> dict[str, float]:
    return {
        "qps": len(latencies) / sum(latencies),
        "p50_ms": float(np.percentile(latencies, 50)) * 1e3,
        "p95_ms": float(np.percentile(latencies, 95)) * 1e3,
    }


async def replace_cost(
    store: InMemoryVectorStore, query: Query, ids: Sequence[str], texts: Sequence[str], questions: Sequence[str]
) -> dict[str, float]:
    """``replace_document`` of one chunk with another copy's text, then one query (cold caches)."""
    replaces, firsts = [], []
    for step in range(min(30, len(ids) // 2)):
        target = (step * 7919) % len(ids)
        document = StoredDocument(document_id=ids[target], content_hash=f"replaced-{step}")
        chunks = make_chunks(ids[target], [texts[(target + len(ids) // 2) % len(ids)]])
        started = time.perf_counter()
        await store.replace_document(INDEX, document, chunks, None)
        replaces.append(time.perf_counter() - started)
        started = time.perf_counter()
        await query(questions[step % len(questions)])
        firsts.append(time.perf_counter() - started)
    return {
        "replace_p50_ms": float(np.median(replaces)) * 1e3,
        "replace_max_ms": max(replaces) * 1e3,
        "first_query_after_write_p50_ms": float(np.median(firsts)) * 1e3,
    }


async def speed(args: argparse.Namespace) -> dict[str, Any]:
    ids, texts = repeat_with_dropout(args.data, args.rows)
    questions = load_questions(args.data, args.queries)
    builds: dict[str, float] = {}
    async with contextlib.AsyncExitStack() as stack:
        started = time.perf_counter()
        host = await open_runiq(ids, texts, stack)
        builds["runiq"] = time.perf_counter() - started
        store = await runiq_store(host)
        systems = runiq_queries(host, store, args.top_k)
        for variant in SPEED_SYSTEMS[2:]:
            started = time.perf_counter()
            systems[variant] = bm25s_query(open_bm25s(texts, variant), variant, ids, args.top_k)
            builds[variant] = time.perf_counter() - started
        log(f"  built: {builds}")
        timings = await interleaved(systems, questions, args.repeats)
        exact = await agreement(systems["runiq retriever"], texts, ids, questions, args.top_k)
        writes = await replace_cost(store, systems["runiq store"], ids, texts, questions)
    return {"rows": args.rows, "build_seconds": builds, "timings": timings, "exact_agreement": exact, "writes": writes}


async def memory(args: argparse.Namespace) -> dict[str, Any]:
    ids, texts = repeat_with_dropout(args.data, args.rows)
    questions = list(dict.fromkeys(load_questions(args.data, args.queries)))
    before = rss()
    parts: dict[str, float] = {}
    async with contextlib.AsyncExitStack() as stack:
        if args.system == "runiq retriever":
            host = await open_runiq(ids, texts, stack)
            store = await runiq_store(host)
            query = runiq_queries(host, store, args.top_k)["runiq retriever"]
            parts["chunk_text_mib"] = sum(sys.getsizeof(text) for text in texts) / 2**20  # the store's copies
        elif args.system == "runiq engine":
            engine = BM25Index(LexicalOptions().analyzer())
            for row, text in enumerate(texts):
                engine.add(row, text)

            async def query(text: str) -> list[str]:
                engine.top(text, args.top_k)
                return []
        else:
            query = bm25s_query(open_bm25s(texts, args.system), args.system, ids, args.top_k)
        built = rss()
        for text in questions:
            await query(text)
        queried = rss()
        if args.system == "runiq retriever":
            parts["lexical_index_mib"] = store.stored_lexical_bytes(INDEX) / 2**20
    mib = 2**20
    return {
        "system": args.system,
        "rows": args.rows,
        "rss_built_mib": (built - before) / mib,
        "rss_after_queries_mib": (queried - before) / mib,
    } | parts


async def concurrency(args: argparse.Namespace) -> dict[str, Any]:
    """``--concurrent`` retrievals started at once (latency counted from that start); a ticker task
    measures how long the event loop goes without running it."""
    ids, texts = repeat_with_dropout(args.data, args.concurrent_rows)
    questions = load_questions(args.data, args.concurrent)
    async with contextlib.AsyncExitStack() as stack:
        host = await open_runiq(ids, texts, stack)
        query = runiq_queries(host, await runiq_store(host), args.top_k)["runiq retriever"]
        await query(questions[0])
        stalls: list[float] = []
        done = asyncio.Event()

        async def ticker() -> None:
            while not done.is_set():
                begin = time.perf_counter()
                await asyncio.sleep(0.001)
                stalls.append(time.perf_counter() - begin - 0.001)

        async def finished(text: str) -> float:
            await query(text)
            return time.perf_counter() - started  # from the common start: queueing included

        tick = asyncio.create_task(ticker())
        started = time.perf_counter()
        latencies = await asyncio.gather(*(finished(text) for text in questions))
        wall = time.perf_counter() - started
        done.set()
        await tick
    return {
        "rows": args.concurrent_rows,
        "queries": len(questions),
        "wall_ms": wall * 1e3,
        "p50_ms": float(np.median(latencies)) * 1e3,
        "max_loop_stall_ms": max(stalls) * 1e3,
    }


# -- driver -----------------------------------------------------------------------------------------------


def worker(args: argparse.Namespace, kind: str, rows: int, system: str = "") -> dict[str, Any]:
    """Run one measurement in a fresh interpreter (clean RSS, no caches shared between systems)."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        str(args.data),
        "--worker",
        kind,
        "--rows",
        str(rows),
        "--system",
        system,
        "--queries",
        str(args.queries),
        "--repeats",
        str(args.repeats),
        "--top-k",
        str(args.top_k),
        "--concurrent",
        str(args.concurrent),
        "--concurrent-rows",
        str(args.concurrent_rows),
    ]
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"collection": Path(args.data).name, "sizes": []}
    for rows in args.rows:
        log(f"{rows} chunks: speed")
        size = {"rows": rows, "speed": worker(args, "speed", rows), "memory": {}}
        for system in MEMORY_SYSTEMS if args.memory else ():
            log(f"{rows} chunks: memory of {system}")
            size["memory"][system] = worker(args, "memory", rows, system)
        results["sizes"].append(size)
    log(f"{args.concurrent} concurrent retrievals over {args.concurrent_rows} chunks")
    results["concurrency"] = worker(args, "concurrency", args.concurrent_rows)
    results["loadavg_at_end"] = os.getloadavg()
    return results


def report(results: dict[str, Any]) -> str:
    lines = []
    for size in results["sizes"]:
        timings, memory = size["speed"]["timings"], size["memory"]
        base = timings["bm25s stopwords=en"]
        lines.append(f"\n{size['rows']:,} chunks (medians of interleaved repeats)")
        lines.append(f"{'system':<24}{'q/s':>9}{'p50 ms':>9}{'p95 ms':>9}{'q/s vs bm25s':>14}")
        for name, row in timings.items():
            lines.append(
                f"{name:<24}{row['qps']:>9.1f}{row['p50_ms']:>9.2f}{row['p95_ms']:>9.2f}"
                f"{row['qps'] / base['qps']:>13.2f}x"
            )
        lines.extend(_memory_lines(memory))
        exact, writes = size["speed"]["exact_agreement"], size["speed"]["writes"]
        lines.append(
            f"top-k identical to exact BM25: {exact['identical_top_k']}/{exact['queries']} queries "
            f"(mean overlap {exact['mean_overlap']:.4f})"
        )
        lines.append(
            f"replace_document p50 {writes['replace_p50_ms']:.2f} ms (max {writes['replace_max_ms']:.2f}); "
            f"first query after a write p50 {writes['first_query_after_write_p50_ms']:.2f} ms"
        )
    c = results["concurrency"]
    lines.append(
        f"\n{c['queries']} concurrent retrievals over {c['rows']:,} chunks: p50 {c['p50_ms']:.1f} ms, "
        f"wall {c['wall_ms']:.1f} ms, longest loop stall {c['max_loop_stall_ms']:.1f} ms"
    )
    lines.append(f"load average at end: {' '.join(f'{v:.2f}' for v in results['loadavg_at_end'])}")
    return "\n".join(lines)


def _memory_lines(memory: dict[str, Any]) -> list[str]:
    if not memory:
        return []
    base = memory["bm25s stopwords=en"]
    lines = [f"{'index RSS (fresh process)':<28}{'built MiB':>10}{'queried MiB':>13}{'vs bm25s':>10}"]
    for name, row in memory.items():
        lines.append(
            f"{name:<28}{row['rss_built_mib']:>10.0f}{row['rss_after_queries_mib']:>13.0f}"
            f"{row['rss_after_queries_mib'] / base['rss_after_queries_mib']:>9.2f}x"
        )
    store = memory.get("runiq retriever", {})
    if "lexical_index_mib" in store:
        lines.append(
            f"  of which the store's BM25 arrays {store['lexical_index_mib']:.0f} MiB and its copies of the "
            f"chunk texts about {store['chunk_text_mib']:.0f} MiB (bm25s keeps no text)"
        )
    return lines


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="a BEIR-layout collection (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--rows", type=int, action="append", help="chunks (repeat the flag for several sizes)")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--concurrent", type=int, default=200)
    parser.add_argument("--concurrent-rows", type=int, default=3000)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--no-memory", dest="memory", action="store_false", help="skip the RSS subprocesses")
    parser.add_argument("--worker", choices=["speed", "memory", "concurrency"], help=argparse.SUPPRESS)
    parser.add_argument("--system", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    args.rows = args.rows or [100_000]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    quiet_logging()
    if args.worker is not None:
        args.rows = args.rows[0]
        measure = {"speed": speed, "memory": memory, "concurrency": concurrency}[args.worker]
        print(json.dumps(asyncio.run(measure(args))))
        return 0
    results = run_all(args)
    print(report(results))
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
