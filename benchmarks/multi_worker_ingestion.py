"""Many ingestion workers (issue 30): N worker processes sharing one run vs one process, same machine.

    python benchmarks/multi_worker_ingestion.py [--documents 1500] [--workers 3] [--buckets 12] \
        [--delay 1.0] [--batch-size 16] [--concurrency 1] [--repeat 3] [--dsn DSN] [--json FILE]

The embedder is I/O-bound like a remote API: ``runiq.rag.testing.SlowEmbedder`` (the hashing embedder
that sleeps ``--delay`` seconds per call), registered by a tiny plugin in each worker. Every worker is
a fresh process running this file with ``--worker``: it builds a host with
``use_directory(DIR, "*.txt")``, that embedder, ``configure_embedding_batching(batch_size,
concurrency)`` and ``use_vector_store("postgresql", dsn=..., schema=...)``, opens the store and the
embedder (``manager.health``), prints ``READY`` and waits. The parent starts the clock when it tells
every worker to go and stops it when the last one has printed its result, so process start-up and
imports are outside the timer and the shared run's joining, claiming, bucket passes and finishing are
inside. Each system ingests the same corpus (one ~300-character file per chunk) into a fresh schema:

* ``single``: one process, an ordinary run (no ``shared_runs``): what one process does today;
* ``shared``: ``--workers`` processes with ``shared_runs(buckets=--buckets)``, all joining one run.

Repeats alternate the order of the two systems; the speed-up is the median of per-repeat ratios.
After each repeat the two schemas must hold the same documents with the same content hashes and
the same number of chunks (the shared run's result is one worker's). PostgreSQL is an embedded
server in a temporary directory (or ``--dsn``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.managed_ingestion import drop_schema, fresh_schema, postgres_server

_INDEX = "workers"


# -- the worker process ----------------------------------------------------------------------------


def _worker_host(args: argparse.Namespace) -> Any:
    import runiq_postgresql.plugin

    from runiq.hosting import HostBuilder
    from runiq.rag import IndexBuilder, add_runiq_rag
    from runiq.rag.providers import hookimpl
    from runiq.rag.testing import SlowEmbedder

    delay = args.delay

    class SlowPlugin:
        @hookimpl
        def runiq_register_providers(self, registry: Any) -> None:
            @asynccontextmanager
            async def open_slow(options: Any) -> AsyncIterator[SlowEmbedder]:
                yield SlowEmbedder(delay=delay, dimensions=64)

            registry.add_embedding("remote-like", open_slow)

    def index(index: IndexBuilder) -> object:
        index = (
            index.use_directory(args.directory, "*.txt")
            .use_embedding("remote-like")
            .use_vector_store("postgresql", dsn=args.dsn, schema=args.schema)
            .configure_embedding_batching(batch_size=args.batch_size, concurrency=args.concurrency)
        )
        if args.buckets:
            index.configure_ingestion(lambda i: i.shared_runs(buckets=args.buckets, lease_seconds=30))
        return index

    builder = HostBuilder(load_entry_points=False, plugins=[runiq_postgresql.plugin, SlowPlugin()])
    add_runiq_rag(builder, lambda rag: rag.add_index(_INDEX, index))
    return builder.build()


async def _worker(args: argparse.Namespace) -> None:
    from runiq.rag import RagIngestionManager

    async with _worker_host(args) as host:
        manager = host.services.get(RagIngestionManager)
        await manager.health(_INDEX)  # opens the store (and its pool) before the clock starts
        print("READY", flush=True)
        await asyncio.to_thread(sys.stdin.readline)
        started = time.perf_counter()
        operation = await manager.run(_INDEX)
        seconds = time.perf_counter() - started
        p = operation.progress
        result = {
            "state": operation.state.value,
            "seconds": seconds,
            "chunks": p.produced_chunks,
            "id": operation.operation_id,
        }
        print("RESULT " + json.dumps(result), flush=True)


# -- the parent --------------------------------------------------------------------------------------


def _corpus(directory: Path, documents: int) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for i in range(documents):
        words = " ".join(f"term{(i * 31 + w) % 997}" for w in range(30))
        (directory / f"doc-{i:05d}.txt").write_text(f"Document {i} on policy item {i * 7}. {words}.\n")


def _spawn(args: argparse.Namespace, schema: str, buckets: int) -> subprocess.Popen[str]:
    command = [
        sys.executable, __file__, "--worker", "--dsn", args.dsn, "--schema", schema, "--directory", str(args.directory),
        "--buckets", str(buckets), "--delay", str(args.delay), "--batch-size", str(args.batch_size),
        "--concurrency", str(args.concurrency),
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("RUNIQ_")}
    return subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env
    )


def _line(process: subprocess.Popen[str], prefix: str) -> str:
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith(prefix):
            return line
    raise RuntimeError(f"a worker ended without {prefix.strip()}")


def _timed(args: argparse.Namespace, schema: str, workers: int, buckets: int) -> dict[str, Any]:
    """Start ``workers`` processes, wait until each is ready, release them together, time until the last ends."""
    processes = [_spawn(args, schema, buckets) for _ in range(workers)]
    try:
        for process in processes:
            _line(process, "READY")
        started = time.perf_counter()
        for process in processes:
            assert process.stdin is not None
            process.stdin.write("go\n")
            process.stdin.flush()
        results = [json.loads(_line(process, "RESULT ")[len("RESULT ") :]) for process in processes]
        seconds = time.perf_counter() - started
    finally:
        for process in processes:
            process.communicate(timeout=600)
    states = {r["state"] for r in results}
    if states != {"completed"} or len({r["id"] for r in results}) != 1:
        raise RuntimeError(f"the run did not complete as one run: {results}")
    return {"seconds": seconds, "chunks": results[0]["chunks"], "workers": results}


async def _stored(dsn: str, schema: str) -> tuple[dict[str, str], int]:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(f'SELECT document_id, content_hash FROM "{schema}".documents')
        chunks = await conn.fetchval(f'SELECT sum(chunk_count) FROM "{schema}".indexes')
    finally:
        await conn.close()
    return {r["document_id"]: r["content_hash"] for r in rows}, int(chunks)


def _repeat(args: argparse.Namespace, order: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    schemas = {name: fresh_schema(name) for name in order}
    try:
        for name in order:
            workers, buckets = (1, 0) if name == "single" else (args.workers, args.buckets)
            out[name] = _timed(args, schemas[name], workers, buckets)
            out[name]["chunks_per_second"] = out[name]["chunks"] / out[name]["seconds"]
        single, shared = (asyncio.run(_stored(args.dsn, schemas[name])) for name in ("single", "shared"))
        if single != shared or single[1] != args.documents:
            raise RuntimeError("the shared run's documents differ from the single run's")
    finally:
        for schema in schemas.values():
            asyncio.run(drop_schema(args.dsn, schema))
    out["speedup"] = out["shared"]["chunks_per_second"] / out["single"]["chunks_per_second"]
    return out


def _report(args: argparse.Namespace, repeats: list[dict[str, Any]], load: tuple[float, ...]) -> dict[str, Any]:
    def median(name: str) -> float:
        return statistics.median(r[name]["chunks_per_second"] for r in repeats)

    speedups = [r["speedup"] for r in repeats]
    summary = {
        "single_chunks_per_second": median("single"),
        "shared_chunks_per_second": median("shared"),
        "speedup_median_of_ratios": statistics.median(speedups),
        "speedups": speedups,
        "ideal_chunks_per_second_per_worker": args.batch_size * args.concurrency / args.delay if args.delay else None,
    }
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in load)}")
    print(f"{args.documents} files, 1 chunk each; embedder sleeps {args.delay} s per batch of {args.batch_size}, "
          f"{args.concurrency} batch(es) in flight per process")  # fmt: skip
    print(f"1 process (ordinary run):         {summary['single_chunks_per_second']:8.1f} chunks/s (median)")
    print(f"{args.workers} processes (shared, {args.buckets} buckets): "
          f"{summary['shared_chunks_per_second']:8.1f} chunks/s (median)")  # fmt: skip
    print(f"speed-up: {summary['speedup_median_of_ratios']:.2f}x (median of {', '.join(f'{s:.2f}' for s in speedups)})")
    return {
        "arguments": {k: str(v) for k, v in vars(args).items()},
        "load_average": load,
        "summary": summary,
        "repeats": repeats,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=1500)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--buckets", type=int, default=12)
    parser.add_argument("--delay", type=float, default=1.0, help="seconds the embedder sleeps per batch")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=1, help="embedding batches in flight per process")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dsn", help="an existing server (default: an embedded one in a temporary directory)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--schema", help=argparse.SUPPRESS)
    parser.add_argument("--directory", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        asyncio.run(_worker(args))
        return
    load = os.getloadavg()
    with postgres_server(args.dsn) as dsn:
        args.dsn = dsn
        args.directory = Path(tempfile.mkdtemp(prefix="runiq-workers-bench-")) / "corpus"
        try:
            _corpus(args.directory, args.documents)
            repeats = [
                _repeat(args, ["single", "shared"] if r % 2 == 0 else ["shared", "single"]) for r in range(args.repeat)
            ]
        finally:
            shutil.rmtree(args.directory.parent, ignore_errors=True)
    report = _report(args, repeats, load)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
