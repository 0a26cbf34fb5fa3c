"""Retrieval quality on any BEIR-layout collection: runiq (through its public API) beside bm25s.

    python benchmarks/beir_eval.py DATA_DIR [--store memory|postgresql] [--mode semantic|lexical|hybrid|all]
                                   [--embedding NAME] [--json FILE] [--top-k 100]

The collection is ingested through the public API (``HostBuilder`` + ``add_runiq_rag``, documents
handed over with ``use_documents``, ``RagIngestionManager.run``) with chunking large enough that every
document is one chunk; chunk hits are mapped to documents by their best chunk. Each query goes through
``RagRetriever.retrieve(RagQuery(..., mode, top_k))``. bm25s (Lucene BM25, k1=1.5, b=0.75, the
defaults) runs on the same title + text in the same process, once with its default tokenisation
(``stopwords="english"``), once with ``stopwords=None`` and once with runiq's English stop word list;
``--bm25s-stemmer`` adds rows with an English Snowball stemmer (needs PyStemmer). ``--analyzer``
selects runiq's lexical analyzer through the store's public options: ``default`` (English stop words,
no stemming), ``no-stopwords``, ``stem``, ``no-stopwords+stem``.

Query text: BEIR queries are plain text, while runiq reads ``"..."`` as an exact-phrase restriction.
``--query-syntax plain`` (the default) replaces double quotes by spaces before querying so the
collection's prose is not read as phrase filters; ``--query-syntax runiq`` passes the text verbatim.

Embeddings: ``--embedding hashing`` (default) is the built-in hashing embedder. Any other name is a
registered embedding provider (``sentence-transformers`` once its plugin is installed; options via
``--embedding-option KEY=VALUE``); its vectors are cached under ``benchmarks/.cache/`` keyed by
collection and model, through a caching client registered as a custom provider. ``--embedding none``
runs lexical mode only.

Metrics (nDCG@10 with graded linear gains and log2 discount, MRR@10, Recall@100) are computed by
``benchmarks/_beir.py``; ``--json FILE`` writes ``{"collection": NAME, "results": [...]}``.
Nothing here or in runiq is tuned to one collection.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import math
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks._beir import BeirCollection, dedupe_documents, evaluate, load_beir
from benchmarks._corpus_files import document_files, document_path
from runiq.hosting import HostBuilder
from runiq.plugins.registry import ProviderKind, ProviderRegistry
from runiq.rag import (
    HashingEmbedding,
    RagDocument,
    RagError,
    RagIngestionManager,
    RagIngestionState,
    RagQuery,
    RagRetrievalMode,
    RagRetriever,
    add_runiq_rag,
)
from runiq.rag._lexical import ENGLISH_STOPWORDS
from runiq.rag.providers import EmbeddingClient, EmbeddingInputKind, hookimpl

__all__ = [
    "CachingEmbeddingClient",
    "CachingEmbeddingPlugin",
    "EvalOptions",
    "evaluate_bm25s",
    "evaluate_runiq",
    "format_table",
    "main",
    "plain_query",
    "quiet_logging",
]

CACHE_DIR = Path(__file__).resolve().parent / ".cache"
FILES_DIR = CACHE_DIR / "files"
MODES = {
    "semantic": RagRetrievalMode.SEMANTIC,
    "lexical": RagRetrievalMode.LEXICAL,
    "hybrid": RagRetrievalMode.HYBRID,
}
# runiq analyzer variants, passed as the store's public ``stopwords``/``stemmer`` options.
ANALYZERS: dict[str, dict[str, str]] = {
    "default": {},
    "no-stopwords": {"stopwords": "none"},
    "stem": {"stemmer": "english"},
    "no-stopwords+stem": {"stopwords": "none", "stemmer": "english"},
}
_CACHED_PROVIDER = "beir-eval-cached"


def quiet_logging() -> None:
    """runiq logs one event per retrieval at INFO; keep the benchmark output (and timings) clean."""
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))


def plain_query(text: str) -> str:
    """Plain-text query: double quotes are prose here, not runiq's exact-phrase syntax."""
    return " ".join(text.replace('"', " ").split())


# -- the embedding cache (a custom provider wrapping any registered one) -------------------------


def _slug(value: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", value).strip("-")[:80] or "x"


class _VectorCache:
    """``sha256(kind, text) -> vector`` in one ``.npz`` file; written atomically on :meth:`save`."""

    def __init__(self, path: Path, dimensions: int) -> None:
        self.path = path
        self.dimensions = dimensions
        self._rows: dict[str, np.ndarray] = {}
        self._dirty = False
        if path.is_file():
            with np.load(path, allow_pickle=False) as data:
                keys, vectors = data["keys"], data["vectors"]
            if vectors.ndim == 2 and vectors.shape[1] == dimensions:
                self._rows = {str(k): vectors[i] for i, k in enumerate(keys)}

    @staticmethod
    def key(kind: EmbeddingInputKind, text: str) -> str:
        return hashlib.sha256(f"{kind.value}\x1f{text}".encode()).hexdigest()

    def get(self, key: str) -> np.ndarray | None:
        return self._rows.get(key)

    def put(self, key: str, vector: np.ndarray) -> None:
        self._rows[key] = np.asarray(vector, dtype=np.float32)
        self._dirty = True

    def __len__(self) -> int:
        return len(self._rows)

    def save(self) -> None:
        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(list(self._rows), dtype="<U64")
        vectors = np.stack(list(self._rows.values())) if self._rows else np.empty((0, self.dimensions), np.float32)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(tmp, keys=keys, vectors=vectors.astype(np.float32))
        os.replace(tmp, self.path)
        self._dirty = False


class CachingEmbeddingClient:
    """An :class:`EmbeddingClient` that answers from the cache and embeds only what is missing."""

    def __init__(self, inner: EmbeddingClient, cache: _VectorCache) -> None:
        self._inner = inner
        self._cache = cache
        self.hits = 0
        self.misses = 0

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dimensions(self) -> int:
        return self._inner.dimensions

    async def embed(self, texts: Sequence[str], kind: EmbeddingInputKind) -> np.ndarray:
        keys = [self._cache.key(kind, text) for text in texts]
        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        missing = []
        for i, key in enumerate(keys):
            cached = self._cache.get(key)
            if cached is None:
                missing.append(i)
            else:
                out[i] = cached
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            fresh = np.asarray(await self._inner.embed([texts[i] for i in missing], kind), dtype=np.float32)
            for row, i in enumerate(missing):
                out[i] = fresh[row]
                self._cache.put(keys[i], fresh[row])
        return out


class CachingEmbeddingPlugin:
    """Registers ``beir-eval-cached``: the named inner provider behind a per collection+model cache."""

    def __init__(self, inner: str, inner_options: dict[str, Any], collection: str, cache_dir: Path = CACHE_DIR) -> None:
        self.inner = inner
        self.inner_options = dict(inner_options)
        self.collection = collection
        self.cache_dir = cache_dir
        self.client: CachingEmbeddingClient | None = None
        self._registry: ProviderRegistry | None = None

    @hookimpl
    def runiq_register_providers(self, registry: ProviderRegistry) -> None:
        self._registry = registry
        registry.add_embedding(_CACHED_PROVIDER, self._open)

    @asynccontextmanager
    async def _open(self, options: object) -> AsyncIterator[CachingEmbeddingClient]:
        assert self._registry is not None
        spec = self._registry.get(ProviderKind.EMBEDDING, self.inner)
        inner_options = spec.validate_options(self.inner_options, context="beir_eval")
        async with spec.factory(inner_options) as inner:
            name = f"{_slug(self.collection)}__{_slug(self.inner)}__{_slug(inner.model_name)}.npz"
            cache = _VectorCache(self.cache_dir / name, inner.dimensions)
            self.client = CachingEmbeddingClient(inner, cache)
            try:
                yield self.client
            finally:
                cache.save()


def _english_stemmer() -> Any:
    try:
        import Stemmer  # PyStemmer
    except ImportError:
        raise SystemExit("a stemmer needs PyStemmer: pip install PyStemmer") from None
    return Stemmer.Stemmer("english")


# -- runiq -----------------------------------------------------------------------------------------


@dataclass(kw_only=True)
class EvalOptions:
    store: str = "memory"
    store_options: dict[str, Any] = field(default_factory=dict)
    modes: Sequence[str] = ("lexical", "semantic", "hybrid")
    embedding: str = "hashing"  # "none" for lexical only
    embedding_options: dict[str, Any] = field(default_factory=dict)
    top_k: int = 100
    query_syntax: str = "plain"  # or "runiq"
    analyzer: str = "default"
    cache_dir: Path = CACHE_DIR
    source: str = "documents"  # or "files": one Markdown file per document, default chunking
    files_dir: Path = FILES_DIR
    file_format: str = "markdown"  # or "text"


def _index_name(collection: str) -> str:
    return ("beir-" + _slug(collection))[:128]


async def evaluate_runiq(collection: BeirCollection, options: EvalOptions) -> list[dict[str, Any]]:
    """Ingest ``collection`` into a fresh host and evaluate each mode in ``options.modes``."""
    modes = [m for m in options.modes if options.embedding != "none" or m == "lexical"]
    if not modes:
        raise ValueError("semantic and hybrid modes need an embedding (not --embedding none)")
    plugins: list[object] = []
    embedding: object | None = None
    if options.embedding == "hashing":
        embedding = HashingEmbedding(**options.embedding_options)
    elif options.embedding != "none":
        cache = CachingEmbeddingPlugin(options.embedding, options.embedding_options, collection.name, options.cache_dir)
        plugins.append(cache)
        embedding = _CACHED_PROVIDER
    builtin_only = options.store == "memory" and options.embedding in ("hashing", "none")
    builder = HostBuilder(plugins=plugins, load_entry_points=not builtin_only)

    name = _index_name(collection.name)
    file_ids = _file_ids(collection, options)

    def configure(index: Any) -> None:
        _use_source(index, collection, options)
        if embedding is not None:
            index.use_embedding(embedding)
        else:
            index.use_default_mode(RagRetrievalMode.LEXICAL)
        store_options = {**ANALYZERS[options.analyzer], **options.store_options}
        if options.store == "memory":
            index.use_in_memory_vector_store(**store_options)
        else:
            index.use_vector_store(options.store, **store_options)

    add_runiq_rag(builder, lambda rag: rag.add_index(name, configure))
    results = []
    async with builder.build() as host:
        started = time.perf_counter()
        operation = await host.services.get(RagIngestionManager).run(name)
        ingest_seconds = time.perf_counter() - started
        progress = operation.progress
        if operation.state is not RagIngestionState.COMPLETED:
            raise RuntimeError(f"ingestion ended {operation.state.value}: {progress}")
        indexed = sum(1 for doc_id in collection.corpus if collection.document_text(doc_id).strip())
        depth = options.top_k * max(1, math.ceil(progress.produced_chunks / max(indexed, 1)))
        retriever = host.services.get(RagRetriever)
        for mode in modes:
            run, failed, seconds = await _run_queries(retriever, name, collection, MODES[mode], depth, options)
            if file_ids:
                run = {query: [file_ids[path] for path in ranked] for query, ranked in run.items()}
            metrics = evaluate(run, collection.qrels, recall_k=options.top_k)
            results.append(
                {
                    "system": "runiq",
                    "store": options.store,
                    "mode": mode,
                    **_metric_fields(metrics, options.top_k),
                    "qps": len(collection.queries) / seconds if seconds > 0 else None,
                    "embedding": options.embedding if mode != "lexical" else None,
                    "analyzer": options.analyzer,
                    "source": options.source,
                    "file_format": options.file_format if options.source == "files" else None,
                    "query_syntax": options.query_syntax,
                    "failed_queries": failed,
                    "ingest_seconds": ingest_seconds,
                    "chunks": progress.produced_chunks,
                }
            )
    return results


def _file_suffix(options: EvalOptions) -> str:
    return ".md" if options.file_format == "markdown" else ".txt"


def _file_ids(collection: BeirCollection, options: EvalOptions) -> dict[str, str]:
    """``--source files``: the document id of each file (its relative path) -> the corpus id; else empty."""
    if options.source != "files":
        return {}
    return {document_path(i, _file_suffix(options)): doc_id for i, doc_id in enumerate(collection.corpus)}


def _use_source(index: Any, collection: BeirCollection, options: EvalOptions) -> None:
    if options.source == "files":  # what users do: a directory of files and the default chunking
        root = document_files(options.files_dir, collection, markdown=options.file_format == "markdown")
        index.use_directory(root, "*" + _file_suffix(options), recursive=True)
        return
    # The whole-document harness: documents handed over in memory, one chunk per document.
    documents = [
        RagDocument(document_id=doc_id, content=collection.document_text(doc_id), title=title or None)
        for doc_id, (title, _) in collection.corpus.items()
    ]
    longest = max((len(d.content) for d in documents), default=1)
    index.use_documents(documents).configure_chunking(max_characters=max(longest + 1, 1000), overlap=0)


async def _run_queries(
    retriever: RagRetriever,
    index_name: str,
    collection: BeirCollection,
    mode: RagRetrievalMode,
    depth: int,
    options: EvalOptions,
) -> tuple[dict[str, list[str]], int, float]:
    run: dict[str, list[str]] = {}
    failed = 0
    started = time.perf_counter()
    for query_id, text in collection.queries.items():
        query_text = plain_query(text) if options.query_syntax == "plain" else text
        try:
            result = await retriever.retrieve(RagQuery(index_name=index_name, text=query_text, mode=mode, top_k=depth))
        except RagError:  # e.g. a query that is empty once its syntax is removed: it scores 0
            failed += 1
            run[query_id] = []
            continue
        run[query_id] = dedupe_documents(hit.document_id for hit in result.hits)[: options.top_k]
    return run, failed, time.perf_counter() - started


def _metric_fields(metrics: dict[str, float], top_k: int) -> dict[str, float]:
    return {"ndcg@10": metrics["ndcg@10"], "mrr@10": metrics["mrr@10"], "recall@100": metrics[f"recall@{top_k}"]}


# -- bm25s -----------------------------------------------------------------------------------------


def evaluate_bm25s(
    collection: BeirCollection, *, stopwords: str | None = "english", stem: bool = False, top_k: int = 100
) -> dict[str, Any]:
    """bm25s with its defaults (Lucene BM25, k1=1.5, b=0.75, ``(?u)\\b\\w\\w+\\b`` lower-cased tokens).

    ``stopwords`` is bm25s's own ``"english"`` list, ``None``, or ``"runiq"``: runiq's English list,
    so the two tokenisations can also be compared with the same stop words.
    """
    import bm25s

    stemmer = _english_stemmer() if stem else None
    variant = f"stopwords={stopwords or 'none'}" + (",stemmer=english" if stem else "")
    if stopwords == "runiq":
        stopwords = sorted(ENGLISH_STOPWORDS)  # type: ignore[assignment]
    doc_ids = list(collection.corpus)
    corpus_tokens = bm25s.tokenize(
        [collection.document_text(d) for d in doc_ids], stopwords=stopwords, stemmer=stemmer, show_progress=False
    )
    retriever = bm25s.BM25()
    retriever.index(corpus_tokens, show_progress=False)
    k = min(top_k, len(doc_ids))
    run: dict[str, list[str]] = {}
    started = time.perf_counter()
    for query_id, text in collection.queries.items():
        tokens = bm25s.tokenize([text], stopwords=stopwords, stemmer=stemmer, return_ids=False, show_progress=False)[0]
        tokens = [t for t in tokens if t in retriever.vocab_dict]
        if not tokens:
            run[query_id] = []
            continue
        ranked, scores = retriever.retrieve([tokens], k=k, show_progress=False, n_threads=1)
        run[query_id] = [doc_ids[int(i)] for i, s in zip(ranked[0], scores[0], strict=True) if s > 0]
    seconds = time.perf_counter() - started
    metrics = evaluate(run, collection.qrels, recall_k=top_k)
    return {
        "system": "bm25s",
        "store": None,
        "mode": "lexical",
        **_metric_fields(metrics, top_k),
        "qps": len(collection.queries) / seconds if seconds > 0 else None,
        "tokenization": variant,
    }


# -- output ----------------------------------------------------------------------------------------


def _label(row: dict[str, Any]) -> str:
    if row["system"] == "bm25s":
        return row.get("tokenization", "")
    parts = []
    if row.get("embedding"):
        parts.append(f"embedding={row['embedding']}")
    if row.get("analyzer", "default") != "default":
        parts.append(f"analyzer={row['analyzer']}")
    if row.get("source", "documents") != "documents":
        parts.append(f"source={row['source']}:{row.get('file_format')}")
    if row.get("query_syntax", "plain") != "plain":
        parts.append(f"query-syntax={row['query_syntax']}")
    if row.get("failed_queries"):
        parts.append(f"failed={row['failed_queries']}")
    return ",".join(parts)


def format_table(collection: BeirCollection, results: Sequence[dict[str, Any]]) -> str:
    lines = [
        f"collection {collection.name}: {len(collection.corpus):,} documents, {len(collection.queries)} judged queries",
        f"{'system':<7} {'store':<10} {'mode':<9} {'nDCG@10':>8} {'MRR@10':>8} {'R@100':>8} {'q/s':>9}  variant",
    ]
    lines.append("-" * (len(lines[1]) + 20))
    for row in results:
        qps = "-" if row["qps"] is None else f"{row['qps']:.1f}"
        lines.append(
            f"{row['system']:<7} {row['store'] or '-':<10} {row['mode']:<9} {row['ndcg@10']:>8.4f}"
            f" {row['mrr@10']:>8.4f} {row['recall@100']:>8.4f} {qps:>9}  {_label(row)}"
        )
    return "\n".join(lines)


def _key_values(pairs: Sequence[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"expected KEY=VALUE, got {pair!r}")
        try:
            out[key] = json.loads(value)
        except json.JSONDecodeError:
            out[key] = value
    return out


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="runiq vs bm25s on a BEIR-layout collection")
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--store", default="memory", help="memory (default) or a store provider, e.g. postgresql")
    parser.add_argument("--store-option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--mode", choices=[*MODES, "all"], default="all")
    parser.add_argument("--embedding", default="hashing", help="hashing (default), none, or a provider name")
    parser.add_argument("--embedding-option", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--top-k", type=int, default=100)
    parser.add_argument("--query-syntax", choices=["plain", "runiq"], default="plain")
    parser.add_argument(
        "--analyzer",
        choices=ANALYZERS,
        action="append",
        default=None,
        help="runiq lexical analyzer (store options); repeat to compare several (default: default)",
    )
    parser.add_argument("--bm25s-stemmer", action="store_true", help="add a bm25s row with an English stemmer")
    parser.add_argument(
        "--source",
        choices=["documents", "files"],
        default="documents",
        help="documents: one chunk per document (default); files: one Markdown file per document in a "
        "directory, ingested with use_directory and the default chunking (the path users take)",
    )
    parser.add_argument("--files-dir", type=Path, default=FILES_DIR, help="where --source files writes the files")
    parser.add_argument(
        "--file-format",
        choices=["markdown", "text"],
        default="markdown",
        help="--source files: .md with the title as a '# ' heading (default), or .txt with the title as first line",
    )
    parser.add_argument("--split", default="test")
    parser.add_argument("--json", metavar="FILE", type=Path)
    return parser.parse_args(argv)


async def run_all(args: argparse.Namespace, collection: BeirCollection) -> list[dict[str, Any]]:
    modes = list(MODES) if args.mode == "all" else [args.mode]
    modes.sort(key=["lexical", "semantic", "hybrid"].index)
    results: list[dict[str, Any]] = [
        evaluate_bm25s(collection, stopwords="english", top_k=args.top_k),
        evaluate_bm25s(collection, stopwords=None, top_k=args.top_k),
        evaluate_bm25s(collection, stopwords="runiq", top_k=args.top_k),
    ]
    if args.bm25s_stemmer:
        results.append(evaluate_bm25s(collection, stopwords="english", stem=True, top_k=args.top_k))
        results.append(evaluate_bm25s(collection, stopwords="runiq", stem=True, top_k=args.top_k))
    for analyzer in args.analyzer or ["default"]:
        options = EvalOptions(
            store=args.store,
            store_options=_key_values(args.store_option),
            modes=modes,
            embedding=args.embedding,
            embedding_options=_key_values(args.embedding_option),
            top_k=args.top_k,
            query_syntax=args.query_syntax,
            analyzer=analyzer,
            source=args.source,
            files_dir=args.files_dir,
            file_format=args.file_format,
        )
        results.extend(await evaluate_runiq(collection, options))
    return results


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    quiet_logging()
    collection = load_beir(args.data_dir, args.split)
    results = asyncio.run(run_all(args, collection))
    print(format_table(collection, results))
    if args.json:
        args.json.write_text(json.dumps({"collection": collection.name, "results": results}, indent=2))
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
