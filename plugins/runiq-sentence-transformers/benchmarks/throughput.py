"""Embedding throughput through the plugin versus calling ``SentenceTransformer.encode`` directly.

    python plugins/runiq-sentence-transformers/benchmarks/throughput.py [CORPUS_JSONL] [--limit N]

Chunks a BEIR corpus (default ``../shared/data/cisi-beir/corpus.jsonl``) with runiq's text chunker,
then, in the same process, alternates rounds of: ``encode`` on all chunks at once; the plugin's
``embed`` on all chunks; and the plugin behind runiq's ``EmbeddingBatcher`` (64 texts per call,
2 calls in flight, the index defaults). Prints chunks/s for each (best of the rounds) and the ratios.
Never part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from runiq.rag import (
    ChunkingOptions,
    EmbeddingBatcher,
    EmbeddingInputKind,
    RagDocument,
    TextChunker,
)

from runiq_sentence_transformers import (
    SentenceTransformerEmbedder,
    SentenceTransformerOptions,
    load_model,
    resolve_model_path,
)

DEFAULT_CORPUS = Path(__file__).resolve().parents[3].parent / "shared" / "data" / "cisi-beir" / "corpus.jsonl"


def _chunks(corpus: Path, limit: int) -> list[str]:
    chunker = TextChunker(ChunkingOptions())
    texts: list[str] = []
    with corpus.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            document = RagDocument(document_id=row["_id"], content=f"{row.get('title', '')}\n\n{row['text']}")
            texts.extend(chunk.content for chunk in chunker.chunk(document))
            if len(texts) >= limit:
                break
    return texts[:limit]


def _best(times: list[float], count: int) -> float:
    return count / min(times)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    texts = _chunks(args.corpus, args.limit)
    options = SentenceTransformerOptions()
    model = load_model(resolve_model_path(options), options.device)
    embedder = SentenceTransformerEmbedder(model, model_name=options.identity, batch_size=options.batch_size)
    batcher = EmbeddingBatcher(embedder, provider="sentence-transformers", batch_size=64, concurrency=2)
    model.encode(texts[:64], batch_size=32, normalize_embeddings=True, show_progress_bar=False)  # warm-up

    direct, plugin, batched = [], [], []
    for _ in range(args.rounds):
        started = time.perf_counter()
        model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
        direct.append(time.perf_counter() - started)
        started = time.perf_counter()
        await embedder.embed(texts, EmbeddingInputKind.DOCUMENT)
        plugin.append(time.perf_counter() - started)
        started = time.perf_counter()
        await batcher.embed(texts)
        batched.append(time.perf_counter() - started)

    n = len(texts)
    mean_chars = sum(map(len, texts)) / n
    print(f"{n} chunks (mean {mean_chars:.0f} characters), best of {args.rounds} rounds, {os.cpu_count()} CPUs")
    print(f"direct SentenceTransformer.encode : {_best(direct, n):7.1f} chunks/s")
    print(f"plugin embed (one call)           : {_best(plugin, n):7.1f} chunks/s  ({min(direct) / min(plugin):.3f}x)")
    print(f"plugin via EmbeddingBatcher(64, 2): {_best(batched, n):7.1f} chunks/s  ({min(direct) / min(batched):.3f}x)")


if __name__ == "__main__":
    asyncio.run(main())
