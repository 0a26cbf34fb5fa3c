"""Managed ingestion at corpus scale: ``RagIngestionManager.run`` over a directory of files, as users run it.

    python benchmarks/managed_ingestion.py pg     [--chunks 100000] [--chunks-per-file 1] [--repeat 3] ...
    python benchmarks/managed_ingestion.py model  [--store memory|postgresql] [--repeat 3] ...
    python benchmarks/managed_ingestion.py memory [--small 20000] [--large 200000] [--repeat 1] ...

Every runiq figure goes through the public API only: ``HostBuilder`` + ``add_runiq_rag``, an index
with ``use_directory(DIR, "*.txt", recursive=True)``, runiq's default chunking (unless
``--max-characters``/``--overlap`` say otherwise), ``use_embedding(...)`` and
``use_vector_store("postgresql", dsn=..., schema=<fresh per run>)``, then one timed
``RagIngestionManager.run`` on a host whose store and embedder were opened first
(``manager.health``), so the timer covers the ingestion and nothing else. The corpora are written
once into ``--data-dir`` and reused (see ``benchmarks/_corpus_files.py``). PostgreSQL is an embedded
server started in a temporary directory (or ``--dsn``), shared by every system of the run.

* ``pg`` (issue 25 items 1 and 4): ``--chunks`` chunks of ~500 characters with precomputed vectors
  through the managed pipeline, against langchain-postgres ``PGVector.add_embeddings`` and a raw
  asyncpg binary COPY that tokenises inside its timer (both from ``postgres_store.py``) on the same
  server, texts and vectors. The embedder is a replaying :class:`ReplayEmbedding`: each text's
  vector is a row of a precomputed clustered table chosen by the text's CRC-32, so embedding costs
  next to nothing and the baselines get the same vectors. Then the unchanged corpus is ingested
  again by a new host on the same schema (a second ``runiq ingest``): embedding calls and speed-up.
  ``--without-postings`` (a diagnostic, not a configuration) adds a managed run whose store writes
  no BM25 postings blocks: what the lexical engine's postings cost the managed path.
* ``model`` (item 2): CISI, one file per document, all-MiniLM-L6-v2 through the
  runiq-sentence-transformers plugin (its packaged model), against one
  ``SentenceTransformer.encode`` of the same chunks (runiq's chunker on the same files, outside the
  timer) at the plugin's batch size.
* ``memory`` (item 3): ``--large`` vs ``--small`` one-line files into PostgreSQL, each ingestion in a
  fresh subprocess: peak RSS growth of that process over its RSS after imports and host start.

Repeats are interleaved (the order of the systems rotates) and medians are reported; ratios compare
systems measured in the same invocation. ``--json FILE`` writes everything, including each repeat.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
import zlib
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._corpus_files import chunk_corpus, chunk_texts, cisi_documents, corpus_files, line_corpus
from benchmarks._postgres import postgres_server, quiesce
from runiq.hosting import HostBuilder
from runiq.logging import configure_logging
from runiq.rag import RagIngestionManager, RagIngestionOperation, RagIngestionState, add_runiq_rag
from runiq.rag._chunking import ChunkingOptions
from runiq.rag.providers import EmbeddingInputKind, hookimpl
from runiq.settings import LoggingSettings

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATA_DIR = REPO / "benchmarks" / ".cache" / "managed_ingestion"
# ../shared/data/cisi-beir beside the main checkout, or two levels up from a worktree (/work/wt/<tree>)
_CISI_CANDIDATES = [base / "shared" / "data" / "cisi-beir" for base in (REPO.parent, REPO.parent.parent)]
DEFAULT_CISI = next((path for path in _CISI_CANDIDATES if path.is_dir()), _CISI_CANDIDATES[0])
INDEX = "bench"
REPLAY_PROVIDER = "bench-replay"
# The peers build no HNSW index, so the store builds none either (``--store-option ann_min_rows=10000``
# restores the default: then the managed figure includes an HNSW build the peers do not do).
DEFAULT_STORE_OPTIONS: dict[str, Any] = {"ann_min_rows": 1_000_000_000}
_DSN_ENV = "RUNIQ_BENCH_MANAGED_DSN"
SCRIPT = Path(__file__).resolve()
T = TypeVar("T")


# -- the replaying embedder ----------------------------------------------------------------------


def replay_table(rows: int = 4096, dim: int = 384, seed: int = 2) -> np.ndarray:
    from benchmarks.postgres_store import clustered

    return clustered(rows, dim, seed=seed)


def replay_rows(texts: Sequence[str], rows: int) -> np.ndarray:
    return np.fromiter((zlib.crc32(t.encode()) for t in texts), dtype=np.int64, count=len(texts)) % rows


def text_checksum(texts: Sequence[str]) -> int:
    """Order-independent: the embedder and the baselines saw the same texts iff these agree."""
    return sum(zlib.crc32(t.encode()) for t in texts) % (1 << 61)


class ReplayEmbedding:
    """An ``EmbeddingClient`` whose vectors are rows of a precomputed table, keyed by each text's CRC-32."""

    def __init__(self, table: np.ndarray) -> None:
        self._table = table
        self.texts = 0
        self.checksum = 0

    @property
    def model_name(self) -> str:
        return f"bench-replay-{self._table.shape[0]}x{self._table.shape[1]}"

    @property
    def dimensions(self) -> int:
        return int(self._table.shape[1])

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> np.ndarray:
        self.texts += len(texts)
        self.checksum = (self.checksum + text_checksum(texts)) % (1 << 61)
        vectors: np.ndarray = self._table[replay_rows(texts, self._table.shape[0])]
        return vectors


class ReplayPlugin:
    """Registers :class:`ReplayEmbedding` as the ``bench-replay`` embedding provider of one host."""

    def __init__(self, table: np.ndarray) -> None:
        self.table = table
        self.client: ReplayEmbedding | None = None

    @hookimpl
    def runiq_register_providers(self, registry: Any) -> None:
        registry.add_embedding(REPLAY_PROVIDER, self._open)

    @contextlib.asynccontextmanager
    async def _open(self, options: object) -> AsyncIterator[ReplayEmbedding]:
        self.client = ReplayEmbedding(self.table)
        yield self.client


# -- hosts and timed runs ------------------------------------------------------------------------

StoreChoice = Callable[[Any], object]  # configures the index's store on an IndexBuilder


def postgres_store(dsn: str, schema: str, options: dict[str, Any]) -> StoreChoice:
    return lambda index: index.use_vector_store("postgresql", dsn=dsn, schema=schema, **options)


def directory_index(
    root: Path, embedding: str, store: StoreChoice, chunking: ChunkingOptions | None
) -> Callable[[Any], None]:
    def configure(index: Any) -> None:
        index.use_directory(root, "*.txt", recursive=True).use_embedding(embedding)
        if chunking is not None:
            index.configure_chunking(max_characters=chunking.max_characters, overlap=chunking.overlap)
        store(index)

    return configure


def directory_host(root: Path, store: StoreChoice, chunking: ChunkingOptions | None, plugin: object) -> HostBuilder:
    builder = HostBuilder(plugins=[plugin])
    add_runiq_rag(builder, lambda rag: rag.add_index(INDEX, directory_index(root, REPLAY_PROVIDER, store, chunking)))
    return builder


async def timed_run(manager: RagIngestionManager, index: str) -> tuple[float, RagIngestionOperation]:
    """One ``manager.run``; the store and embedder are opened (``health``) before the timer."""
    await manager.health(index)
    started = time.perf_counter()
    operation = await manager.run(index)
    seconds = time.perf_counter() - started
    if operation.state is not RagIngestionState.COMPLETED:
        codes = sorted({f.code for f in operation.failures})
        raise RuntimeError(f"ingestion ended {operation.state.value}: {operation.progress} {codes}")
    return seconds, operation


async def timed_host_run(builder: HostBuilder) -> tuple[float, RagIngestionOperation]:
    async with builder.build() as host:
        return await timed_run(host.services.get(RagIngestionManager), INDEX)


# -- PostgreSQL server and schemas ---------------------------------------------------------------


def fresh_schema(tag: str) -> str:
    return f"mi_{tag}_{uuid.uuid4().hex[:10]}"


async def drop_schema(dsn: str, schema: str) -> None:
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(dsn)
    try:
        await conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await conn.close()


async def migrated_schema(dsn: str, tag: str) -> str:
    """A fresh schema the store has created (extensions, catalog), for the raw baseline's table."""
    from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore

    schema = fresh_schema(tag)
    async with PostgresVectorStore(PostgresStoreOptions.model_validate({"dsn": dsn, "schema": schema})):
        pass
    return schema


# -- item 1 and 4: throughput and re-ingestion on PostgreSQL -------------------------------------


async def managed_pg_repeat(args: argparse.Namespace, dsn: str, root: Path, table: np.ndarray) -> dict[str, Any]:
    """First ingestion into a fresh schema, then the unchanged corpus again from a new host."""
    schema = fresh_schema("pg")
    store = postgres_store(dsn, schema, args.store_options)
    try:
        await quiesce(dsn)
        plugin = ReplayPlugin(table)
        first_s, first = await timed_host_run(directory_host(root, store, args.chunking, plugin))
        assert plugin.client is not None
        embedded = {"texts": plugin.client.texts, "checksum": plugin.client.checksum}
        await quiesce(dsn)
        again_s, again = await timed_host_run(directory_host(root, store, args.chunking, ReplayPlugin(table)))
    finally:
        await drop_schema(dsn, schema)
    return {
        "first_s": first_s,
        "first": first.progress,
        "embedded": embedded,
        "again_s": again_s,
        "again": again.progress,
    }


async def raw_pg_repeat(args: argparse.Namespace, dsn: str, chunks: list[str], vectors: np.ndarray) -> float:
    from benchmarks.postgres_store import ingest_raw

    schema = await migrated_schema(dsn, "raw")
    try:
        await quiesce(dsn)
        return await ingest_raw(dsn, schema, chunks, vectors, args.batch, tokenise_in_timer=True, staging=False)
    finally:
        await drop_schema(dsn, schema)


async def langchain_repeat(args: argparse.Namespace, dsn: str, chunks: list[str], vectors: np.ndarray) -> float:
    from benchmarks.postgres_store import ingest_langchain

    rows = min(args.langchain_chunks or len(chunks), len(chunks))
    await quiesce(dsn)
    collection = f"managed_bench_{uuid.uuid4().hex[:8]}"
    seconds = await asyncio.to_thread(ingest_langchain, dsn, chunks[:rows], vectors[:rows], args.batch, collection)
    return rows / seconds


def rotated(systems: list[T], repeat: int) -> list[T]:
    shift = repeat % len(systems)
    return systems[shift:] + systems[:shift]


async def run_pg(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    files = -(-args.chunks // args.chunks_per_file)
    root = chunk_corpus(args.data_dir, files=files, per_file=args.chunks_per_file, source=args.text, cisi=args.cisi)
    chunks = chunk_texts(root, args.chunking or ChunkingOptions())
    table = replay_table()
    vectors = table[replay_rows(chunks, table.shape[0])]
    runs: dict[str, list[Any]] = {"managed": [], "raw_copy_tokenising": [], "langchain": [], "without_postings": []}
    systems = ["managed", "raw_copy_tokenising"] + ([] if args.no_langchain else ["langchain"])
    systems += ["without_postings"] if args.without_postings else []
    for r in range(args.repeat):
        for system in rotated(systems, r):
            if system == "managed":
                runs[system].append(await managed_pg_repeat(args, dsn, root, table))
            elif system == "without_postings":
                with postings_not_written():
                    runs[system].append(await managed_pg_repeat(args, dsn, root, table))
            elif system == "raw_copy_tokenising":
                runs[system].append(len(chunks) / await raw_pg_repeat(args, dsn, chunks, vectors))
            else:
                runs[system].append(await langchain_repeat(args, dsn, chunks, vectors))
        progress(f"repeat {r + 1}/{args.repeat}", runs, len(chunks))
    return pg_summary(args, files, chunks, runs)


@contextlib.contextmanager
def postings_not_written() -> Iterator[None]:
    """Diagnostic (``--without-postings``): the store builds, writes and merges no BM25 postings blocks
    (its lexical search then finds nothing), so the managed run shows what the postings cost."""
    from runiq_postgresql import postings

    original = postings.PostingsBuffer.blocks
    postings.PostingsBuffer.blocks = lambda self: postings.Blocks()  # type: ignore[method-assign]
    try:
        yield
    finally:
        postings.PostingsBuffer.blocks = original  # type: ignore[method-assign]


def progress(label: str, runs: dict[str, list[Any]], chunks: int) -> None:
    parts = []
    for system, values in runs.items():
        if values:
            value = values[-1]
            rate = chunks / value["first_s"] if isinstance(value, dict) else value
            parts.append(f"{system} {rate:,.1f}/s")
            if isinstance(value, dict):
                parts.append(f"re-ingest {value['again_s']:.2f} s")
    print(f"{label}: " + ", ".join(parts), file=sys.stderr, flush=True)


def check_same_chunks(managed: list[dict[str, Any]], chunks: list[str]) -> None:
    """The pipeline must have produced and embedded exactly the chunks the baselines ingest."""
    expected = text_checksum(chunks)
    for run in managed:
        produced, embedded = run["first"].produced_chunks, run["embedded"]
        if produced != len(chunks) or embedded["texts"] != len(chunks) or embedded["checksum"] != expected:
            raise RuntimeError(f"managed run produced {produced} chunks, expected {len(chunks)} (or other texts)")


def pg_summary(args: argparse.Namespace, files: int, chunks: list[str], runs: dict[str, list[Any]]) -> dict[str, Any]:
    n = len(chunks)
    managed = runs["managed"]
    check_same_chunks(managed, chunks)
    rates = [n / run["first_s"] for run in managed]
    out: dict[str, Any] = {
        "files": files,
        "chunks": n,
        "mean_chunk_chars": sum(map(len, chunks)) / n,
        "chunking": "default" if args.chunking is None else vars_of(args.chunking),
        "store_options": args.store_options,
        "managed_rows_per_s": median(rates),
        "first_run_s": median([run["first_s"] for run in managed]),
        "first_embedding_calls": median([run["first"].embedding_calls for run in managed]),
        "reingest_s": median([run["again_s"] for run in managed]),
        "reingest_speedup": median([run["first_s"] / run["again_s"] for run in managed]),
        "reingest_embedding_calls": max(run["again"].embedding_calls for run in managed),
        "reingest_skipped_documents": min(run["again"].skipped_documents for run in managed),
    }
    out |= compared("managed", rates, "raw_copy_tokenising", runs["raw_copy_tokenising"], "rows_per_s")
    if runs["without_postings"]:
        bare = [n / run["first_s"] for run in runs["without_postings"]]
        out["without_postings_rows_per_s"] = median(bare)
        out["without_postings_vs_raw_copy_tokenising"] = median(
            [a / b for a, b in zip(bare, runs["raw_copy_tokenising"], strict=True)]
        )
    if runs["langchain"]:
        out["langchain_rows"] = min(args.langchain_chunks or n, n)
        out |= compared("managed", rates, "langchain", runs["langchain"], "rows_per_s")
    out["runs"] = {"managed_rows_per_s": rates, "reingest_s": [run["again_s"] for run in managed]}
    return out


def compared(name: str, ours: list[float], peer: str, theirs: list[float], unit: str) -> dict[str, Any]:
    """The peer's median rate, and the ratio: the median of the per-repeat ratios (each repeat's two
    runs were measured back to back, so they share that moment's load), and the ratio of the medians."""
    ratios = [a / b for a, b in zip(ours, theirs, strict=True)]
    return {
        f"{peer}_{unit}": median(theirs),
        f"{name}_vs_{peer}": median(ratios),
        f"{name}_vs_{peer}_of_medians": median(ours) / median(theirs),
        f"{name}_vs_{peer}_per_repeat": ratios,
        f"{peer}_{unit}_per_repeat": theirs,
    }


def pg_table(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    rows = [
        ("managed ingestion (rows/s)", f"{result['managed_rows_per_s']:,.0f}", ""),
        ("raw COPY + tokenising (rows/s)", f"{result['raw_copy_tokenising_rows_per_s']:,.0f}", ""),
        ("managed / raw COPY + tokenising", f"{result['managed_vs_raw_copy_tokenising']:.2f}x", ">= 0.7x"),
    ]
    if "without_postings_rows_per_s" in result:
        rows += [
            ("managed without postings (diagnostic, rows/s)", f"{result['without_postings_rows_per_s']:,.0f}", ""),
            ("without postings / raw COPY", f"{result['without_postings_vs_raw_copy_tokenising']:.2f}x", ""),
        ]
    if "langchain_rows_per_s" in result:
        rows += [
            ("langchain PGVector.add_embeddings (rows/s)", f"{result['langchain_rows_per_s']:,.0f}", ""),
            ("managed / langchain", f"{result['managed_vs_langchain']:.2f}x", ">= 5x"),
        ]
    rows.append(("first run / re-ingest (s)", f"{result['first_run_s']:.2f} / {result['reingest_s']:.2f}", ""))
    rows.append(("re-ingest speed-up", f"{result['reingest_speedup']:.1f}x", ">= 20x"))
    rows.append(("re-ingest embedding calls", str(result["reingest_embedding_calls"]), "0"))
    return rows


# -- item 2: a real model, pipeline vs direct encode ----------------------------------------------


def model_store(args: argparse.Namespace, dsn: str | None, schemas: list[str]) -> StoreChoice:
    if args.store == "memory":
        return lambda index: index.use_in_memory_vector_store()
    assert dsn is not None
    schema = fresh_schema("model")
    schemas.append(schema)
    return postgres_store(dsn, schema, args.store_options)


def model_host(args: argparse.Namespace, root: Path, warm: Path, dsn: str | None, schemas: list[str]) -> HostBuilder:
    """One host: an index on a few documents to load and warm the model, one index per repeat."""
    builder = HostBuilder()

    def register(rag: Any) -> None:
        rag.add_index("warm", directory_index(warm, "sentence-transformers", model_store(args, dsn, schemas), None))
        for r in range(args.repeat):
            rag.add_index(
                f"r{r}", directory_index(root, "sentence-transformers", model_store(args, dsn, schemas), None)
            )

    add_runiq_rag(builder, register)
    return builder


def torch_threads() -> int:
    import torch

    return int(torch.get_num_threads())


def direct_model() -> tuple[Any, int]:
    from runiq_sentence_transformers import SentenceTransformerOptions, load_model, resolve_model_path

    options = SentenceTransformerOptions()  # the plugin's defaults: packaged model, cpu, batch size
    return load_model(resolve_model_path(options), options.device), options.batch_size


async def run_model(args: argparse.Namespace, dsn: str | None) -> dict[str, Any]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    root = cisi_documents(args.data_dir, args.cisi, args.documents)
    warm = cisi_documents(args.data_dir, args.cisi, 16)
    chunks = chunk_texts(root, ChunkingOptions())
    model, batch_size = direct_model()
    model.encode(chunks[:64], batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)  # warm-up
    schemas: list[str] = []
    runs: dict[str, list[float]] = {"managed": [], "direct": []}
    if args.grouped_encode:
        runs["grouped"] = []
    try:
        async with model_host(args, root, warm, dsn, schemas).build() as host:
            manager = host.services.get(RagIngestionManager)
            await timed_run(manager, "warm")  # loads and warms the plugin's model, untimed
            for r in range(args.repeat):
                for system in rotated(list(runs), r):
                    seconds = await model_system(system, manager, r, model, chunks, (batch_size, args.grouped_encode))
                    runs[system].append(len(chunks) / seconds)
                progress(f"repeat {r + 1}/{args.repeat}", dict(runs), len(chunks))
    finally:
        if dsn is not None:
            for schema in schemas:
                await drop_schema(dsn, schema)
    return model_summary(args, len(corpus_files(root)), len(chunks), batch_size, runs)


def model_summary(
    args: argparse.Namespace, documents: int, chunks: int, batch_size: int, runs: dict[str, list[float]]
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "store": args.store,
        "documents": documents,
        "chunks": chunks,
        "batch_size": batch_size,
        "torch_threads": torch_threads(),
        "managed_chunks_per_s": median(runs["managed"]),
    }
    out |= compared("managed", runs["managed"], "direct", runs["direct"], "chunks_per_s")
    if "grouped" in runs:
        out["grouped_calls_of"] = args.grouped_encode
        out |= compared("managed", runs["managed"], "grouped", runs["grouped"], "chunks_per_s")
    return out


async def model_system(
    system: str, manager: RagIngestionManager, repeat: int, model: Any, chunks: list[str], sizes: tuple[int, int]
) -> float:
    """One timed pass; ``sizes`` is the encode batch size and the texts per call of the grouped reference."""
    batch_size, per_call = sizes
    if system != "managed":
        calls = [chunks] if system == "direct" else [chunks[i : i + per_call] for i in range(0, len(chunks), per_call)]
        started = time.perf_counter()
        for texts in calls:
            model.encode(texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
        return time.perf_counter() - started
    seconds, operation = await timed_run(manager, f"r{repeat}")
    if operation.progress.produced_chunks != len(chunks):
        raise RuntimeError(f"managed run produced {operation.progress.produced_chunks} chunks, expected {len(chunks)}")
    return seconds


def model_table(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f"managed ingestion, MiniLM, {result['store']} (chunks/s)", f"{result['managed_chunks_per_s']:,.1f}", ""),
        (f"direct encode, batch {result['batch_size']} (chunks/s)", f"{result['direct_chunks_per_s']:,.1f}", ""),
        ("managed / direct encode", f"{result['managed_vs_direct']:.2f}x", ">= 0.9x"),
        *_grouped_rows(result),
    ]


def _grouped_rows(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    if "grouped_chunks_per_s" not in result:
        return []
    rate, calls = result["grouped_chunks_per_s"], result["grouped_calls_of"]
    return [
        (f"direct encode in calls of {calls} texts (chunks/s)", f"{rate:,.1f}", ""),
        ("managed / encode in calls", f"{result['managed_vs_grouped']:.2f}x", ""),
    ]


# -- item 3: peak memory vs corpus size ------------------------------------------------------------


def proc_status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def reset_peak_rss() -> bool:
    """``5`` in ``/proc/self/clear_refs`` resets VmHWM to the current RSS (Linux >= 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as clear:
            clear.write("5")
    except OSError:
        return False
    return True


async def memory_child(root: Path, schema: str, store_options: dict[str, Any]) -> dict[str, Any]:
    """In the subprocess: RSS after imports and host start (store and embedder open), then the run's peak."""
    import gc

    dsn = os.environ[_DSN_ENV]
    plugin = ReplayPlugin(replay_table())
    builder = directory_host(root, postgres_store(dsn, schema, store_options), None, plugin)
    async with builder.build() as host:
        manager = host.services.get(RagIngestionManager)
        await manager.health(INDEX)
        gc.collect()
        baseline = proc_status_kib("VmRSS")
        reset = reset_peak_rss()
        started = time.perf_counter()
        operation = await manager.run(INDEX)
        seconds = time.perf_counter() - started
        peak, after = proc_status_kib("VmHWM"), proc_status_kib("VmRSS")
    return {
        "state": operation.state.value,
        "documents": operation.progress.processed_documents,
        "chunks": operation.progress.produced_chunks,
        "seconds": seconds,
        "baseline_rss_mib": baseline / 1024,
        "peak_rss_mib": peak / 1024,
        "growth_mib": (peak - baseline) / 1024,
        "rss_after_run_mib": after / 1024,
        "peak_reset": reset,
        "ru_maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


async def memory_repeat(args: argparse.Namespace, dsn: str, root: Path) -> dict[str, Any]:
    schema = fresh_schema("mem")
    await quiesce(dsn)
    command = [sys.executable, str(SCRIPT), "_memory-child", str(root), schema]
    command += ["--store-options", json.dumps(args.store_options)]
    env = {**os.environ, _DSN_ENV: dsn}
    try:
        done = await asyncio.to_thread(subprocess.run, command, env=env, capture_output=True, text=True, check=False)
    finally:
        await drop_schema(dsn, schema)
    if done.returncode != 0:
        raise RuntimeError(f"memory child failed ({done.returncode}):\n{done.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if result["state"] != RagIngestionState.COMPLETED.value:
        raise RuntimeError(f"memory child ingestion ended {result['state']}")
    return result


async def run_memory(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    roots = {size: line_corpus(args.data_dir, files=size, numbered=not args.plain) for size in (args.small, args.large)}
    runs: dict[int, list[dict[str, Any]]] = {args.small: [], args.large: []}
    for r in range(args.repeat):
        for size in rotated([args.small, args.large], r):
            runs[size].append(await memory_repeat(args, dsn, roots[size]))
            last = runs[size][-1]
            print(
                f"repeat {r + 1}/{args.repeat}: {size:,} files: +{last['growth_mib']:.1f} MiB "
                f"(baseline {last['baseline_rss_mib']:.0f} MiB) in {last['seconds']:.1f} s",
                file=sys.stderr,
                flush=True,
            )
    small, large = runs[args.small], runs[args.large]
    ratios = [
        b["growth_mib"] / a["growth_mib"] if a["growth_mib"] > 0 else float("inf")
        for a, b in zip(small, large, strict=True)
    ]
    return {
        "small_files": args.small,
        "large_files": args.large,
        "small_growth_mib": median([run["growth_mib"] for run in small]),
        "large_growth_mib": median([run["growth_mib"] for run in large]),
        "growth_ratio": median(ratios),
        "growth_ratio_per_repeat": ratios,
        "small_seconds": median([run["seconds"] for run in small]),
        "large_seconds": median([run["seconds"] for run in large]),
        "numbered_lines": not args.plain,
        "store_options": args.store_options,
        "runs": {str(size): values for size, values in runs.items()},
    }


def memory_table(result: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (f"peak RSS growth, {result['small_files']:,} files (MiB)", f"{result['small_growth_mib']:.1f}", ""),
        (f"peak RSS growth, {result['large_files']:,} files (MiB)", f"{result['large_growth_mib']:.1f}", ""),
        ("growth ratio (large / small)", f"{result['growth_ratio']:.2f}x", "<= 1.5x"),
        (
            "ingestion time small / large (s)",
            f"{result['small_seconds']:.1f} / {result['large_seconds']:.1f}",
            "",
        ),
    ]


# -- output ----------------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def vars_of(options: ChunkingOptions) -> dict[str, int]:
    return {"max_characters": options.max_characters, "overlap": options.overlap}


def environment() -> dict[str, Any]:
    def git(*argv: str) -> str:
        done = subprocess.run(["git", *argv], cwd=REPO, capture_output=True, text=True, check=False)
        return done.stdout.strip()

    return {
        "commit": git("rev-parse", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg(),
        "python": sys.version.split()[0],
    }


def print_table(title: str, rows: list[tuple[str, str, str]]) -> None:
    width = max(len(row[0]) for row in rows)
    print(f"\n{title}")
    print(f"{'':{width}}  {'measured':>16}  target")
    for label, value, target in rows:
        print(f"{label:{width}}  {value:>16}  {target}")
    print("(a ratio is the median of the per-repeat ratios of runs measured back to back)")


def key_values(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        out[key] = json.loads(value) if value[:1].isdigit() or value in ("true", "false") else value
    return out


# -- command line ----------------------------------------------------------------------------------


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = main.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, help="generated corpora (reused)")
    common.add_argument("--cisi", type=Path, default=DEFAULT_CISI, help="the CISI collection (BEIR layout)")
    common.add_argument("--repeat", type=int, default=3, help="interleaved repeats; medians are reported")
    common.add_argument("--dsn", help="an existing server (default: an embedded one in a temporary directory)")
    common.add_argument("--store-option", action="append", default=[], metavar="KEY=VALUE")
    common.add_argument("--json", type=Path)
    pg = commands.add_parser("pg", parents=[common], help="items 1 and 4: rows/s vs langchain and raw COPY; re-ingest")
    pg.add_argument("--chunks", type=int, default=100_000)
    pg.add_argument("--chunks-per-file", type=int, default=1)
    pg.add_argument("--text", choices=["cisi", "synthetic"], default="cisi")
    pg.add_argument("--max-characters", type=int, help="chunking max_characters (default: runiq's default)")
    pg.add_argument("--overlap", type=int, help="chunking overlap (default: runiq's default)")
    pg.add_argument("--batch", type=int, default=10_000, help="rows per raw COPY / langchain call")
    pg.add_argument("--langchain-chunks", type=int, help="rows for the langchain runs (default: all)")
    pg.add_argument("--no-langchain", action="store_true")
    pg.add_argument(
        "--without-postings",
        action="store_true",
        help="diagnostic: also a managed run whose store writes no BM25 postings (what the postings cost)",
    )
    model = commands.add_parser("model", parents=[common], help="item 2: MiniLM through the pipeline vs encode")
    model.add_argument("--store", choices=["memory", "postgresql"], default="memory")
    model.add_argument("--documents", type=int, help="the first N CISI documents (default: all 1,460)")
    model.add_argument(
        "--grouped-encode",
        type=int,
        default=0,
        metavar="N",
        help="also time encode in consecutive calls of N texts (64: the pipeline's embedding batch size)",
    )
    memory = commands.add_parser("memory", parents=[common], help="item 3: peak RSS growth, large vs small corpus")
    memory.add_argument("--small", type=int, default=20_000)
    memory.add_argument("--large", type=int, default=200_000)
    memory.add_argument("--plain", action="store_true", help="lines without their own number (a fixed vocabulary)")
    child = commands.add_parser("_memory-child")
    child.add_argument("root", type=Path)
    child.add_argument("schema")
    child.add_argument("--store-options", type=json.loads, default={})
    return main


def chunking_of(args: argparse.Namespace) -> ChunkingOptions | None:
    if getattr(args, "max_characters", None) is None and getattr(args, "overlap", None) is None:
        return None
    default = ChunkingOptions()
    return ChunkingOptions(
        max_characters=args.max_characters or default.max_characters,
        overlap=default.overlap if args.overlap is None else args.overlap,
    )


async def run(args: argparse.Namespace, dsn: str | None) -> dict[str, Any]:
    if args.command == "pg":
        assert dsn is not None
        return await run_pg(args, dsn)
    if args.command == "model":
        return await run_model(args, dsn)
    assert dsn is not None
    return await run_memory(args, dsn)


TABLES = {
    "pg": ("Items 1 and 4: PostgreSQL throughput and re-ingestion", pg_table),
    "model": ("Item 2: all-MiniLM-L6-v2, pipeline vs direct encode", model_table),
    "memory": ("Item 3: peak RSS growth of the ingesting process", memory_table),
}


def main() -> None:
    args = parser().parse_args()
    configure_logging(LoggingSettings(level="warning"))
    if args.command == "_memory-child":
        print(json.dumps(asyncio.run(memory_child(args.root, args.schema, args.store_options))))
        return
    if args.repeat < 1:
        raise SystemExit("--repeat must be at least 1")
    args.store_options = {**DEFAULT_STORE_OPTIONS, **key_values(args.store_option)}
    args.chunking = chunking_of(args)
    args.data_dir = args.data_dir.resolve()
    needs_server = args.command != "model" or args.store == "postgresql"
    started, load_at_start = time.perf_counter(), os.getloadavg()
    with postgres_server(args.dsn, "runiq-managed-bench-") if needs_server else contextlib.nullcontext(None) as dsn:
        result = asyncio.run(run(args, dsn))
    report = {"command": args.command, "repeat": args.repeat, **environment(), **result}
    report |= {"load_average_at_start": load_at_start, "wall_s": time.perf_counter() - started}
    title, table = TABLES[args.command]
    print_table(f"{title} (commit {report['commit'][:10]}, median of {args.repeat})", table(result))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2, default=str))


if __name__ == "__main__":
    main()
