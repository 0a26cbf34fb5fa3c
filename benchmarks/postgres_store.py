"""The PostgreSQL store (runiq-postgresql) against raw asyncpg and langchain-postgres on the same server.

    python benchmarks/postgres_store.py [--rows 100000] [--dim 384] [--repeat 3] [--cisi DIR]
                                        [--dsn DSN] [--json FILE]

With no ``--dsn`` an embedded server is started in a temporary directory (and removed afterwards).
Every ingest figure is the median of ``--repeat`` runs, interleaved (store, raw, raw+tokenising,
langchain, then again), each into a fresh table or logical index so no run inherits another's
caches or bloat, and each after an untimed ``VACUUM`` and ``CHECKPOINT`` (:func:`quiesce`).

* Ingest: ``--rows`` chunks (~500-character texts, precomputed clustered vectors), one chunk per
  document, written through ``PostgresVectorStore.replace_documents`` in batches of ``--batch``
  inside ``store.bulk_load`` (secondary indexes rebuilt once at the end). Baselines:

  - ``raw_copy``: raw asyncpg binary COPY of the same rows (binary tsvectors included) straight into
    an identical chunk table whose GIN indexes are built after the load. Its rows, term vectors
    included, are prepared *before* the timer starts: the floor for the server-side work.
  - ``raw_copy_tokenising``: the same, with the term vectors computed inside the timer (the same
    work the store does, in one process).
  - ``raw_copy_staging``: rows prepared before the timer, COPYed into a temporary table with text
    ``metadata``/``lexemes`` and merged with ``INSERT ... SELECT`` (the store's design until the
    binary tsvector encoder).
  - ``langchain``: ``langchain_postgres.PGVector.add_embeddings`` with the same texts, vectors,
    metadata and ids, in the same batches (JSONB metadata, no secondary indexes: langchain builds
    none, so it does strictly less work than the store).

  All figures exclude the HNSW build, which is timed separately (once).
* Vector top-10: p50/p95 latency of ``store.search`` and of the bare SQL the store sends, and
  recall@10 against exact (numpy) search at the ``ef_search`` the store picks for ``top_k = 10``.
  Vectors are a Gaussian mixture (clustered, as real embeddings are; uniform random vectors are
  HNSW's worst case). ``--cisi DIR`` adds the same measurement on all-MiniLM-L6-v2 embeddings of a
  BEIR collection, one chunk per document, through the sentence-transformers plugin and the
  ``beir_eval`` vector cache (``benchmarks/.cache``).
* Lexical and hybrid p50: BM25 over the same chunks, and both halves run concurrently as the
  retriever's hybrid mode does. The synthetic texts draw from a 36-word vocabulary (BM25's worst
  case: a word query matches nearly every chunk); ``--cisi DIR`` adds the same figures on real text,
  the collection's documents repeated up to ``--rows`` chunks, queried with its own questions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runiq_postgresql import PostgresStoreOptions, PostgresVectorStore
from runiq_postgresql.lexical import chunk_terms
from runiq_postgresql.rows import query_vector, row_columns
from runiq_postgresql.schema import chunk_table_ddl, chunk_table_name, postings_table_name, secondary_index_ddl

from benchmarks._corpus import copies_for, repeated
from benchmarks._postgres import one_chunk_items, postgres_server, quiesce
from runiq.rag.providers import IndexSpec, RagChunk, StoredDocument, parse_lexical_query

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


def _raw_row(i: int, text: str, vector: np.ndarray) -> tuple[Any, ...]:
    """One chunk row in the store's column order (``rows.row_columns``), terms built as the store builds them."""
    terms = chunk_terms(text)
    doc = f"d{i:06d}"
    meta = json.dumps({"group": i % 20})
    return (doc, f"{doc}#0", 0, text, 0, len(text), meta, vector, terms.term_count, terms.tsvector, terms.identifiers)


_RAW_INDEX_ID = 999_999  # the raw baselines' chunk table: chunks_999999 in the benchmark schema, dropped after each run
_STAGING_CASTS = {"metadata": "::jsonb", "lexemes": "::tsvector"}  # the staged columns that travel as text


async def ingest_raw(
    dsn: str, schema: str, corpus: list[str], vectors: np.ndarray, batch: int, *, tokenise_in_timer: bool, staging: bool
) -> float:
    """Raw asyncpg binary COPY into a chunk table created by the store's own DDL (``schema.chunk_table_ddl``:
    same columns, storage and index definitions), its GIN indexes built after the load.

    ``staging``: COPY into a temporary table with text ``metadata``/``lexemes`` and merge with one
    ``INSERT ... SELECT`` per batch, the way a raw client without a binary tsvector encoder must.
    """
    import asyncpg
    from runiq_postgresql.lexical import tsvector_literal
    from runiq_postgresql.pool import decode_tsvector, decode_vector, encode_tsvector, encode_vector

    conn = await asyncpg.connect(dsn)
    try:
        vector_schema = await conn.fetchval(
            "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE extname='vector'"
        )
        await conn.set_type_codec(
            "vector", schema=vector_schema, encoder=encode_vector, decoder=decode_vector, format="binary"
        )
        await conn.set_type_codec(
            "tsvector", schema="pg_catalog", encoder=encode_tsvector, decoder=decode_tsvector, format="binary"
        )
        table_name = chunk_table_name(_RAW_INDEX_ID)
        table = f'"{schema}"."{table_name}"'
        indexes = secondary_index_ddl(schema, _RAW_INDEX_ID)
        postings = f'"{postings_table_name(_RAW_INDEX_ID)}"'
        for ddl in chunk_table_ddl(schema, _RAW_INDEX_ID, vectors.shape[1]):
            if ddl not in indexes and postings not in ddl:
                await conn.execute(ddl)  # the table and its storage; the GIN indexes come after the load
        # The server numbers the rows (the store reserves row ids because it also writes postings).
        columns = [column for column in row_columns(True) if column != "row_id"]
        await conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS s (document_id text, chunk_id text, ordinal int, content text, "
            "start_offset int, end_offset int, metadata text, embedding vector, term_count int, lexemes text, "
            "identifiers text) ON COMMIT DELETE ROWS"
        )
        merge = (
            f"INSERT INTO {table} ({', '.join(columns)}) "
            f"SELECT {', '.join(c + _STAGING_CASTS.get(c, '') for c in columns)} FROM s"
        )
        lexemes = columns.index("lexemes")

        def row(i: int) -> tuple[Any, ...]:
            values = _raw_row(i, corpus[i], vectors[i])
            if not staging:
                return values
            return (*values[:lexemes], tsvector_literal(values[lexemes]), *values[lexemes + 1 :])

        prepared = [] if tokenise_in_timer else [row(i) for i in range(len(corpus))]
        started = time.perf_counter()
        for start in range(0, len(corpus), batch):
            stop = min(start + batch, len(corpus))
            rows = [row(i) for i in range(start, stop)] if tokenise_in_timer else prepared[start:stop]
            async with conn.transaction():
                if not staging:
                    await conn.copy_records_to_table(table_name, schema_name=schema, records=rows, columns=columns)
                    continue
                await conn.copy_records_to_table("s", records=rows, columns=columns)
                await conn.execute(merge)
        for ddl in indexes:
            await conn.execute(ddl)  # indexes built after the load, as the store's bulk_load does
        elapsed = time.perf_counter() - started
        await conn.execute(f"DROP TABLE {table}")
        return elapsed
    finally:
        await conn.close()


def ingest_langchain(dsn: str, corpus: list[str], vectors: np.ndarray, batch: int, collection: str) -> float:
    """langchain-postgres ``PGVector.add_embeddings`` (psycopg 3 + SQLAlchemy), the same rows and batches."""
    from langchain_core.embeddings import Embeddings
    from langchain_postgres import PGVector

    class _Precomputed(Embeddings):
        """add_embeddings takes the vectors as given; nothing here is ever asked to embed."""

        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise NotImplementedError

        def embed_query(self, text: str) -> list[float]:
            raise NotImplementedError

    url = dsn.replace("postgresql://", "postgresql+psycopg://", 1).replace("postgres://", "postgresql+psycopg://", 1)
    pg = PGVector(
        embeddings=_Precomputed(),
        collection_name=collection,
        connection=url,
        embedding_length=vectors.shape[1],
        use_jsonb=True,
        pre_delete_collection=True,
    )
    as_lists = vectors.tolist()  # langchain takes list[list[float]]: converted outside the timer
    try:
        started = time.perf_counter()
        for start in range(0, len(corpus), batch):
            stop = min(start + batch, len(corpus))
            pg.add_embeddings(
                texts=corpus[start:stop],
                embeddings=as_lists[start:stop],
                metadatas=[{"group": i % 20} for i in range(start, stop)],
                ids=[f"d{i:06d}" for i in range(start, stop)],
            )
        elapsed = time.perf_counter() - started
        pg.delete_collection()
        return elapsed
    finally:
        pg._engine.dispose()


async def force_ann(store: PostgresVectorStore, name: str) -> float:
    """Build the HNSW index now (the benchmark keeps ``ann_min_rows`` above its row counts)."""
    index = await store._require(name)
    started = time.perf_counter()
    async with store.pool.acquire() as conn, conn.transaction():
        await store._build_ann(conn, index.index_id, index.spec)
    index.ann = True
    return time.perf_counter() - started


async def vector_latency(
    store: PostgresVectorStore, name: str, vectors: np.ndarray, queries: np.ndarray, ids: list[str]
) -> dict[str, Any]:
    """Store vs bare SQL through the same pool, each query warmed by both, timed in alternating order.

    Both paths take a connection from the store's pool per query, as an application would (the pool
    hands back the most recently released one, so both run on the same backend). Timing the bare SQL
    on a connection held across queries compared two server backends, only one of which had run the
    warm-up, so the gap included cache effects the library does not cause.
    """
    index = await store._require(name)
    truth = np.argsort(-(vectors @ queries.T), axis=0)[:10].T
    id_array = np.asarray(ids)
    lat, raw_lat, recalls = [], [], []
    ef = min(1000, max(store.options.hnsw_ef_search, 4 * 10))  # what the store picks for top_k = 10
    sql = index.sql.search_ann or index.sql.search_exact

    async def raw_on(conn: Any, encoded: bytes, ef_search: int) -> list[Any]:
        return list(await conn.fetch(sql, encoded, 10, 30, ef_search))  # ef_search is local to the statement

    async def raw(encoded: bytes, ef_search: int) -> list[Any]:
        async with store.pool.acquire() as conn:  # the statements the store sends, on a pooled connection
            return await raw_on(conn, encoded, ef_search)

    for qi, query in enumerate(queries):
        encoded = query_vector(index.spec, query)  # the encoding store.search sends
        await raw(encoded, ef)  # warm-up: both timed calls then find the same pages cached
        hits = await store.search(name, query, top_k=10)
        for first in (qi % 2 == 0, qi % 2 == 1):
            started = time.perf_counter()
            if first:
                hits = await store.search(name, query, top_k=10)
                lat.append(time.perf_counter() - started)
            else:
                await raw(encoded, ef)
                raw_lat.append(time.perf_counter() - started)
        recalls.append(len({h.document_id for h in hits} & set(id_array[truth[qi]])) / 10)
    by_ef = {}
    async with store.pool.acquire() as conn:
        for candidate in (40, 64, 100, 160, 250):  # recall of the bare SQL at other ef_search values
            found = []
            for qi, query in enumerate(queries):
                rows = await raw_on(conn, query_vector(index.spec, query), candidate)
                found.append(len({r["document_id"] for r in rows} & set(id_array[truth[qi]])) / 10)
            by_ef[str(candidate)] = float(np.mean(found))
    return {
        "ann_index": index.ann,
        "ef_search": ef,
        "queries": len(queries),
        "recall@10": float(np.mean(recalls)),
        "recall@10_by_ef_search": by_ef,
        "p50_ms": percentile(lat, 50),
        "p95_ms": percentile(lat, 95),
        "raw_sql_p50_ms": percentile(raw_lat, 50),
        "raw_sql_p95_ms": percentile(raw_lat, 95),
        "overhead_p50": percentile(lat, 50) / percentile(raw_lat, 50),
    }


async def lexical_latency(store: PostgresVectorStore, name: str, vectors: np.ndarray, n: int) -> dict[str, float]:
    """Identifier queries (``DOC-001234``: rare terms) and word queries, reported apart.

    The synthetic texts draw every word from a 36-word vocabulary, so a word query matches nearly
    every chunk: BM25's worst case (real vocabularies are Zipfian), reported for what it is.
    """
    rng = np.random.default_rng(3)
    times: dict[str, list[float]] = {"identifier": [], "words": [], "hybrid_identifier": [], "hybrid_words": []}
    for i in range(n):
        kind = "words" if i % 2 else "identifier"
        if kind == "words" and len(times["words"]) >= max(5, n // 10):
            continue  # each takes ~a second at 100k rows; a few are enough for a median
        text = " ".join(rng.choice(WORDS, size=4)) if kind == "words" else f"DOC-{int(rng.integers(len(vectors))):06d}"
        query = parse_lexical_query(text)
        started = time.perf_counter()
        await store.lexical_search(name, query, top_k=10)
        times[kind].append(time.perf_counter() - started)
        started = time.perf_counter()
        await asyncio.gather(store.lexical_search(name, query, top_k=40), store.search(name, vectors[i], top_k=40))
        times["hybrid_" + kind].append(time.perf_counter() - started)
    return {
        f"lexical_{k}_p50_ms" if not k.startswith("hybrid") else f"{k}_p50_ms": percentile(v, 50)
        for k, v in times.items()
    }


async def cisi_embeddings(data_dir: Path) -> tuple[list[str], list[str], np.ndarray, np.ndarray, list[str]]:
    """all-MiniLM-L6-v2 vectors (unit length) of a BEIR collection's documents and queries, cached as
    beir_eval caches them, and the query texts."""
    from benchmarks._beir import load_beir
    from benchmarks.beir_eval import CachingEmbeddingPlugin, quiet_logging
    from runiq.plugins.host import PluginHost
    from runiq.plugins.registry import ProviderKind, ProviderRegistry
    from runiq.rag.providers import EmbeddingInputKind

    quiet_logging()
    collection = load_beir(data_dir)
    plugin = CachingEmbeddingPlugin("sentence-transformers", {}, collection.name)
    registry = ProviderRegistry()
    PluginHost.create(plugins=[plugin]).register_providers(registry)
    spec = registry.get(ProviderKind.EMBEDDING, "beir-eval-cached")
    doc_ids = list(collection.corpus)
    texts_ = [collection.document_text(d) for d in doc_ids]
    async with spec.factory(spec.validate_options({}, context="postgres_store")) as client:
        docs = np.asarray(await client.embed(texts_, EmbeddingInputKind.DOCUMENT), dtype=np.float32)
        query_texts = list(collection.queries.values())
        queries = np.asarray(await client.embed(query_texts, EmbeddingInputKind.QUERY), dtype=np.float32)
    docs = docs / np.linalg.norm(docs, axis=1, keepdims=True)
    queries = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    return doc_ids, texts_, docs, queries, query_texts


async def cisi_vector(
    store: PostgresVectorStore, data_dir: Path, embedded: tuple[list[str], list[str], np.ndarray, np.ndarray]
) -> dict[str, Any]:
    doc_ids, texts_, docs, queries = embedded
    name = "cisi"
    await store.ensure_index(IndexSpec(name=name, dimensions=docs.shape[1], embedding_model="all-MiniLM-L6-v2"))
    await store.replace_documents(name, one_chunk_items(doc_ids, texts_, docs))
    await force_ann(store, name)
    return {"collection": Path(data_dir).name, "documents": len(doc_ids)} | await vector_latency(
        store, name, docs, queries, doc_ids
    )


async def cisi_lexical(
    store: PostgresVectorStore,
    data_dir: Path,
    embedded: tuple[list[str], list[str], np.ndarray, np.ndarray],
    query_texts: list[str],
    rows: int,
    batch: int,
) -> dict[str, Any]:
    """Lexical and hybrid latency on real text: the collection's documents repeated up to ``rows``
    chunks (a real vocabulary and term distribution) and its own natural-language queries, the
    semantic half on the documents' MiniLM vectors. Each copy after the first keeps a random 80% of
    its document's words, so copies do not tie: exact duplicates would make the top k a block of
    equal scores, which flatters BM25's candidate pruning."""
    doc_ids, texts_, docs, queries = embedded
    copies = copies_for(len(doc_ids), rows)
    ids, corpus = repeated(doc_ids, texts_, rows)
    vectors = np.tile(docs, (copies, 1))[:rows]
    name = "cisi_lexical"
    await store.ensure_index(IndexSpec(name=name, dimensions=docs.shape[1], embedding_model="all-MiniLM-L6-v2"))
    async with store.bulk_load(name):
        for start in range(0, rows, batch):
            stop = min(start + batch, rows)
            await store.replace_documents(
                name, one_chunk_items(ids[start:stop], corpus[start:stop], vectors[start:stop])
            )
    await force_ann(store, name)
    times: dict[str, list[float]] = {"lexical": [], "hybrid": []}
    for text, vector in zip(query_texts, queries, strict=True):
        query = parse_lexical_query(text)
        await store.lexical_search(name, query, top_k=10)  # warm-up
        started = time.perf_counter()
        await store.lexical_search(name, query, top_k=10)
        times["lexical"].append(time.perf_counter() - started)
        started = time.perf_counter()
        await asyncio.gather(store.lexical_search(name, query, top_k=40), store.search(name, vector, top_k=40))
        times["hybrid"].append(time.perf_counter() - started)
    return {
        "collection": Path(data_dir).name,
        "chunks": rows,
        "copies": copies,
        "queries": len(query_texts),
        "lexical_p50_ms": percentile(times["lexical"], 50),
        "lexical_p95_ms": percentile(times["lexical"], 95),
        "hybrid_p50_ms": percentile(times["hybrid"], 50),
        "hybrid_p95_ms": percentile(times["hybrid"], 95),
    }


def _median(values: list[float]) -> float:
    return float(np.median(values))


async def ingest_all(
    args: argparse.Namespace, dsn: str, store: PostgresVectorStore, schema: str, corpus: list[str], vectors: np.ndarray
) -> dict[str, Any]:
    """Interleaved repeats; the last store index is kept for the search measurements."""
    runs: dict[str, list[float]] = {
        "store": [], "raw_copy": [], "raw_copy_tokenising": [], "raw_copy_staging": [], "langchain": []
    }  # fmt: skip
    lc_rows = min(args.langchain_rows or args.rows, args.rows)
    for r in range(args.repeat):
        name = f"bench{r}"
        await quiesce(dsn)
        runs["store"].append(args.rows / await ingest_store(store, name, corpus, vectors, args.batch))
        if r < args.repeat - 1:
            await store.drop_index(name)
        for key, tokenise, staging in (
            ("raw_copy", False, False),
            ("raw_copy_tokenising", True, False),
            ("raw_copy_staging", False, True),
        ):
            await quiesce(dsn)
            seconds = await ingest_raw(
                dsn, schema, corpus, vectors, args.batch, tokenise_in_timer=tokenise, staging=staging
            )
            runs[key].append(args.rows / seconds)
        if not args.no_langchain:
            await quiesce(dsn)
            seconds = await asyncio.to_thread(
                ingest_langchain, dsn, corpus[:lc_rows], vectors[:lc_rows], args.batch, f"bench_{schema}_{r}"
            )
            runs["langchain"].append(lc_rows / seconds)
        print(
            f"repeat {r + 1}/{args.repeat}: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in runs.items() if v),
            file=sys.stderr,
        )
    store_rate = _median(runs["store"])
    out: dict[str, Any] = {
        "store_rows_per_s": store_rate,
        "raw_copy_rows_per_s": _median(runs["raw_copy"]),
        "raw_copy_tokenising_rows_per_s": _median(runs["raw_copy_tokenising"]),
        "raw_copy_staging_rows_per_s": _median(runs["raw_copy_staging"]),
        "store_vs_raw": store_rate / _median(runs["raw_copy"]),
        "store_vs_raw_tokenising": store_rate / _median(runs["raw_copy_tokenising"]),
        "store_vs_raw_staging": store_rate / _median(runs["raw_copy_staging"]),
    }
    if runs["langchain"]:
        out |= {
            "langchain_rows": lc_rows,
            "langchain_rows_per_s": _median(runs["langchain"]),
            "store_vs_langchain": store_rate / _median(runs["langchain"]),
        }
    return out | {"runs_rows_per_s": runs}


async def run(args: argparse.Namespace, dsn: str) -> dict[str, Any]:
    corpus = texts(args.rows, seed=1)
    vectors = clustered(args.rows, args.dim, seed=2)
    queries = clustered(args.queries, args.dim, seed=2)[: args.queries] + 0.05 * clustered(
        args.queries, args.dim, seed=9
    )
    queries = (queries / np.linalg.norm(queries, axis=1, keepdims=True)).astype(np.float32)
    schema = f"bench_{uuid.uuid4().hex[:8]}"
    options = PostgresStoreOptions(dsn=dsn, schema=schema, ann_min_rows=args.rows + 10_000, pool_max_size=4)
    results: dict[str, Any] = {"rows": args.rows, "dim": args.dim, "batch": args.batch, "repeat": args.repeat}
    async with PostgresVectorStore(options) as store:
        results |= await ingest_all(args, dsn, store, schema, corpus, vectors)
        name = f"bench{args.repeat - 1}"
        results["hnsw_build_s"] = await force_ann(store, name)
        ids = [f"d{i:06d}" for i in range(args.rows)]
        results["vector"] = await vector_latency(store, name, vectors, queries, ids)
        results |= await lexical_latency(store, name, vectors, args.queries)
        if args.cisi is not None:
            doc_ids, texts_, docs, query_vectors, query_texts = await cisi_embeddings(args.cisi)
            embedded = (doc_ids, texts_, docs, query_vectors)
            results["vector_cisi_minilm"] = await cisi_vector(store, args.cisi, embedded)
            results["lexical_cisi_repeated"] = await cisi_lexical(
                store, args.cisi, embedded, query_texts, args.rows, args.batch
            )
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3, help="ingest runs per system; medians are reported")
    parser.add_argument("--langchain-rows", type=int, help="rows for the langchain run (default: --rows)")
    parser.add_argument("--no-langchain", action="store_true", help="skip the langchain-postgres peer")
    parser.add_argument("--cisi", type=Path, help="a BEIR collection for the MiniLM recall measurement")
    parser.add_argument("--dsn")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    with postgres_server(args.dsn, "runiq-bench-") as dsn:
        results = asyncio.run(run(args, dsn))
    print(json.dumps(results, indent=2))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
