"""Exact in-memory top-k vector search: runiq's store versus plain numpy and faiss, in the same run.

For each N in ``--sizes``: N random L2-normalised float32 vectors (``--dim``, default 384) and
``--queries`` random normalised queries. Every repeat runs all queries, one at a time, through each
system as a block (numpy, faiss, runiq, in an order that rotates between repeats); the figures are
medians over repeats of each block's per-query p50/p95.

* numpy: ``scores = X @ q`` then ``argpartition`` and a sort of the k winners, on the same vectors.
* faiss: ``IndexFlatIP`` (exact inner product), ``search(q[None], k)``.
* runiq: ``await InMemoryVectorStore.search(index, q, top_k=k)`` -- the public async method, filters
  off, on a store filled through ``replace_document`` (``--chunks-per-document`` chunks per call).

Also reported: bytes the store holds for vectors versus the raw float32 bytes, upsert throughput
(and the slowest single ``replace_document`` call, which shows whether growth copies the matrix), the
agreement of each system's top-k ids with numpy's, and a 1 GiB numpy copy as a bandwidth reference
(exact search is one streaming pass over the matrix, so it is memory-bandwidth bound).

    python benchmarks/vector_search.py --sizes 100000,1000000 --json /tmp/vs.json

Needs the ``bench`` extra (``faiss-cpu``). Thread counts are left as the environment sets them.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from runiq.rag._stores.base import DistanceMetric, IndexSpec, StoredDocument
from runiq.rag._stores.memory import InMemoryVectorStore
from runiq.rag.testing import make_chunks

F32 = npt.NDArray[np.float32]
INDEX = "bench"


@dataclass
class SizeResult:
    n: int
    dim: int
    k: int
    queries: int
    repeats: int
    metric: str
    raw_vector_bytes: int
    stored_vector_bytes: int
    stored_over_raw: float
    upsert_vectors_per_second: float
    upsert_seconds: float
    upsert_max_call_ms: float
    upsert_median_call_ms: float
    single_document_upsert_ms: float
    rss_delta_bytes_per_chunk: float | None
    latency_ms: dict[str, dict[str, float]] = field(default_factory=dict)  # system -> p50/p95
    ratios: dict[str, float] = field(default_factory=dict)
    agreement_at_k: dict[str, float] = field(default_factory=dict)
    scan_gb_per_s: dict[str, float] = field(default_factory=dict)


def _normalised(rng: np.random.Generator, rows: int, dim: int) -> F32:
    out = rng.standard_normal((rows, dim), dtype=np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _rss() -> int | None:
    try:
        import psutil
    except ImportError:
        return None
    return int(psutil.Process().memory_info().rss)


def copy_bandwidth(gib: float = 1.0, repeats: int = 5) -> dict[str, float]:
    """Median time of ``np.copyto`` of a ``gib`` GiB array; GB/s counts the bytes copied once.

    Both buffers are written before timing. A source made with ``np.zeros`` is *not* a valid
    reference: its untouched pages all map the kernel's shared zero page, so the "copy" reads from
    cache and reports several times the real bandwidth.
    """
    size = int(gib * (1 << 30))
    src = np.empty(size, dtype=np.uint8)
    src.fill(1)
    dst = np.empty(size, dtype=np.uint8)
    dst.fill(2)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    del src, dst
    return {"bytes": float(size), "median_seconds": seconds, "gb_per_s": size / seconds / 1e9}


def _top_k_numpy(matrix: F32, query: F32, k: int) -> npt.NDArray[np.int64]:
    scores = matrix @ query
    part = np.argpartition(scores, scores.shape[0] - k)[scores.shape[0] - k :]
    return part[np.argsort(-scores[part], kind="stable")]


async def _build_store(
    vectors: F32, metric: DistanceMetric, per_document: int
) -> tuple[InMemoryVectorStore, dict[str, float]]:
    store = InMemoryVectorStore()
    await store.ensure_index(IndexSpec(name=INDEX, dimensions=vectors.shape[1], metric=metric))
    n = vectors.shape[0]
    calls = []
    rss_before = _rss()
    started = time.perf_counter()
    for doc, start in enumerate(range(0, n, per_document)):
        block = vectors[start : start + per_document]
        # Constant one-word content: the lexical index the store keeps beside the vectors stays small,
        # so the figures are about vectors (content is opaque to vector search anyway).
        chunks = make_chunks(f"d{doc}", ["vector"] * block.shape[0])
        t0 = time.perf_counter()
        await store.replace_document(INDEX, StoredDocument(document_id=f"d{doc}", content_hash=str(doc)), chunks, block)
        calls.append(time.perf_counter() - t0)
    total = time.perf_counter() - started
    rss_after = _rss()
    # One more single-chunk document on the full store: must not cost a full matrix copy.
    extra = _normalised(np.random.default_rng(1), 1, vectors.shape[1])
    singles = []
    for i in range(5):
        t0 = time.perf_counter()
        await store.replace_document(
            INDEX, StoredDocument(document_id=f"single{i}", content_hash="x"), make_chunks(f"single{i}", ["s"]), extra
        )
        singles.append(time.perf_counter() - t0)
    await store.delete_documents(INDEX, [f"single{i}" for i in range(5)])
    stats = {
        "seconds": total,
        "per_second": n / total,
        "max_call_ms": max(calls) * 1000,
        "median_call_ms": statistics.median(calls) * 1000,
        "single_ms": statistics.median(singles) * 1000,
        "rss_per_chunk": None if rss_before is None or rss_after is None else (rss_after - rss_before) / n,
    }
    return store, stats


def _percentiles(samples: Sequence[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p50 = statistics.median(ordered)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return p50, p95


def _row_of(chunk_id: str, per_document: int) -> int:
    doc, ordinal = chunk_id.split("#")
    return int(doc[1:]) * per_document + int(ordinal)


async def bench_size(
    n: int,
    *,
    dim: int = 384,
    k: int = 10,
    queries: int = 100,
    repeats: int = 5,
    metric: DistanceMetric = DistanceMetric.DOT_PRODUCT,
    per_document: int = 1000,
    seed: int = 0,
    log: Callable[[str], None] = print,
) -> SizeResult:
    import faiss

    rng = np.random.default_rng(seed)
    vectors = _normalised(rng, n, dim)
    qs = _normalised(rng, queries, dim)
    log(f"[N={n:,}] building runiq store ({per_document} chunks per replace_document) ...")
    store, upsert = await _build_store(vectors, metric, per_document)
    log(f"[N={n:,}] building faiss IndexFlatIP ...")
    flat = faiss.IndexFlatIP(dim)
    flat.add(vectors)

    def run_numpy(q: F32) -> list[int]:
        return _top_k_numpy(vectors, q, k).tolist()

    def run_faiss(q: F32) -> list[int]:
        _, ids = flat.search(q[None, :], k)
        return ids[0].tolist()

    async def run_runiq(q: F32) -> list[int]:
        hits = await store.search(INDEX, q, top_k=k)
        return [_row_of(h.chunk_id, per_document) for h in hits]

    # Warm-up and agreement with numpy's exact answer.
    truth = [set(run_numpy(q)) for q in qs]
    agreement = {
        "faiss": statistics.fmean(len(truth[i] & set(run_faiss(q))) / k for i, q in enumerate(qs)),
        "runiq": statistics.fmean([len(truth[i] & set(await run_runiq(q))) / k for i, q in enumerate(qs)]),
    }
    # Each repeat runs every system over all queries as one block, in an order that rotates between
    # repeats. Blocks are not interleaved query by query: faiss's OpenMP threads keep spinning for a
    # while after each search and would steal both cores from whatever runs next (measured: numpy
    # 9.8 -> 17 ms at 100k right after a faiss call). A pause and an untimed query precede each block.
    systems = ("numpy", "faiss", "runiq")
    per_system: dict[str, list[tuple[float, float]]] = {s: [] for s in systems}
    for repeat in range(repeats):
        for j in range(len(systems)):
            system = systems[(repeat + j) % len(systems)]
            await asyncio.sleep(0.25)
            samples = []
            for i, q in enumerate([qs[-1], *qs]):
                t0 = time.perf_counter()
                if system == "numpy":
                    run_numpy(q)
                elif system == "faiss":
                    run_faiss(q)
                else:
                    await run_runiq(q)
                if i:
                    samples.append(time.perf_counter() - t0)
            per_system[system].append(_percentiles(samples))
        log(
            f"[N={n:,}] repeat {repeat + 1}/{repeats}: "
            + ", ".join(f"{s} p50 {per_system[s][-1][0] * 1000:.2f} ms" for s in per_system)
        )
    latency = {
        system: {
            "p50": statistics.median(p50 for p50, _ in runs) * 1000,
            "p95": statistics.median(p95 for _, p95 in runs) * 1000,
        }
        for system, runs in per_system.items()
    }
    raw = vectors.nbytes
    stored = store.stored_vector_bytes(INDEX)
    result = SizeResult(
        n=n,
        dim=dim,
        k=k,
        queries=queries,
        repeats=repeats,
        metric=metric.value,
        raw_vector_bytes=raw,
        stored_vector_bytes=stored,
        stored_over_raw=stored / raw,
        upsert_vectors_per_second=upsert["per_second"],
        upsert_seconds=upsert["seconds"],
        upsert_max_call_ms=upsert["max_call_ms"],
        upsert_median_call_ms=upsert["median_call_ms"],
        single_document_upsert_ms=upsert["single_ms"],
        rss_delta_bytes_per_chunk=upsert["rss_per_chunk"],
        latency_ms=latency,
        ratios={
            "runiq/numpy p50": latency["runiq"]["p50"] / latency["numpy"]["p50"],
            "runiq/faiss p50": latency["runiq"]["p50"] / latency["faiss"]["p50"],
            "runiq/numpy p95": latency["runiq"]["p95"] / latency["numpy"]["p95"],
            "runiq/faiss p95": latency["runiq"]["p95"] / latency["faiss"]["p95"],
        },
        agreement_at_k=agreement,
        scan_gb_per_s={system: raw / (v["p50"] / 1000) / 1e9 for system, v in latency.items()},
    )
    return result


def _environment() -> dict[str, Any]:
    env: dict[str, Any] = {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
        "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE"),
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
        "loadavg_at_end": os.getloadavg(),
    }
    try:
        import faiss

        env["faiss"] = faiss.__version__
        env["faiss_omp_threads"] = faiss.omp_get_max_threads()
    except ImportError:
        pass
    try:
        from threadpoolctl import threadpool_info

        env["blas"] = [
            {k: info.get(k) for k in ("internal_api", "version", "num_threads", "architecture")}
            for info in threadpool_info()
        ]
    except ImportError:
        pass
    return env


def _table(results: Sequence[SizeResult], bandwidth: dict[str, float]) -> str:
    lines = []
    head = f"{'N':>10} {'system':<7} {'p50 ms':>8} {'p95 ms':>8} {'scan GB/s':>10} {'top-k = numpy':>14}"
    lines.append(head)
    lines.append("-" * len(head))
    for r in results:
        for system in ("numpy", "faiss", "runiq"):
            lat = r.latency_ms[system]
            agree = "1.000 (ref)" if system == "numpy" else f"{r.agreement_at_k[system]:.3f}"
            lines.append(
                f"{r.n:>10,} {system:<7} {lat['p50']:>8.2f} {lat['p95']:>8.2f}"
                f" {r.scan_gb_per_s[system]:>10.1f} {agree:>14}"
            )
        lines.append(
            f"{'':>10} ratios  runiq/numpy p50 {r.ratios['runiq/numpy p50']:.2f}x"
            f"  p95 {r.ratios['runiq/numpy p95']:.2f}x;"
            f"  runiq/faiss p50 {r.ratios['runiq/faiss p50']:.2f}x  p95 {r.ratios['runiq/faiss p95']:.2f}x"
        )
        rss = "n/a" if r.rss_delta_bytes_per_chunk is None else f"{r.rss_delta_bytes_per_chunk:,.0f} B/chunk RSS"
        lines.append(
            f"{'':>10} memory  stored {r.stored_vector_bytes / 2**20:,.1f} MiB"
            f" vs raw {r.raw_vector_bytes / 2**20:,.1f} MiB"
            f" = {r.stored_over_raw:.3f}x  (process growth {rss})"
        )
        lines.append(
            f"{'':>10} upsert  {r.upsert_vectors_per_second:,.0f} vectors/s ({r.upsert_seconds:.1f} s);"
            f" replace_document median {r.upsert_median_call_ms:.1f} ms, max {r.upsert_max_call_ms:.1f} ms;"
            f" 1-chunk document on the full store {r.single_document_upsert_ms:.3f} ms"
        )
    lines.append(
        f"1 GiB numpy copy: {bandwidth['median_seconds'] * 1000:.1f} ms = {bandwidth['gb_per_s']:.1f} GB/s"
        " (bytes copied / time; read + write traffic is twice that)"
    )
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    metric = DistanceMetric.COSINE if args.metric == "cosine" else DistanceMetric.DOT_PRODUCT
    bandwidth = copy_bandwidth(1.0, repeats=args.repeats)
    print(f"1 GiB numpy copy: {bandwidth['gb_per_s']:.1f} GB/s", flush=True)
    results = []
    for n in args.sizes:
        gc.collect()  # the previous size's matrices and store
        results.append(
            await bench_size(
                n,
                dim=args.dim,
                k=args.k,
                queries=args.queries,
                repeats=args.repeats,
                metric=metric,
                per_document=args.chunks_per_document,
                seed=args.seed,
                log=lambda line: print(line, file=sys.stderr, flush=True),
            )
        )
    print(_table(results, bandwidth))
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"load average at end: {load} (other work on the machine skews timings)")
    return {"environment": _environment(), "copy_bandwidth": bandwidth, "results": [asdict(r) for r in results]}


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(float(part)) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("sizes are comma-separated integers, e.g. 100000,1000000") from None
    if not sizes or min(sizes) <= 0:
        raise argparse.ArgumentTypeError("sizes must be positive")
    return sizes


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=_sizes, default=[100_000, 1_000_000], help="comma-separated N values")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=7, help="medians are over this many repeats")
    parser.add_argument("--metric", choices=["dot_product", "cosine"], default="dot_product")
    parser.add_argument("--chunks-per-document", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    report = asyncio.run(main_async(args))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(report, handle, indent=2)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
