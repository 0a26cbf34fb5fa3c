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

from runiq.rag import RagDocument
from runiq.rag._chunking import ChunkingOptions, TextChunker
from runiq.rag._embeddings import EmbeddingBatcher
from runiq.rag.providers import EmbeddingInputKind

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


def _direct_in_groups(model: object, texts: list[str], size: int) -> None:
    for start in range(0, len(texts), size):
        model.encode(texts[start : start + size], batch_size=32, normalize_embeddings=True, show_progress_bar=False)  # type: ignore[attr-defined]


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=64, help="texts per EmbeddingBatcher call (index default 64)")
    args = parser.parse_args()

    texts = _chunks(args.corpus, args.limit)
    options = SentenceTransformerOptions()
    model = load_model(resolve_model_path(options), options.device)
    embedder = SentenceTransformerEmbedder(model, model_name=options.identity, batch_size=options.batch_size)
    batcher = EmbeddingBatcher(embedder, provider="sentence-transformers", batch_size=args.batch_size, concurrency=2)
    model.encode(texts[:64], batch_size=32, normalize_embeddings=True, show_progress_bar=False)  # warm-up

    times: dict[str, list[float]] = {"direct": [], "plugin": [], "direct-groups": [], "batcher": []}
    for _ in range(args.rounds):  # interleaved, so load from other processes hits every variant alike
        for name in times:
            started = time.perf_counter()
            if name == "direct":
                model.encode(texts, batch_size=32, normalize_embeddings=True, show_progress_bar=False)
            elif name == "plugin":
                await embedder.embed(texts, EmbeddingInputKind.DOCUMENT)
            elif name == "direct-groups":
                _direct_in_groups(model, texts, args.batch_size)
            else:
                await batcher.embed(texts)
            times[name].append(time.perf_counter() - started)

    n = len(texts)
    best = {name: min(values) for name, values in times.items()}
    size = args.batch_size
    print(f"{n} chunks (mean {sum(map(len, texts)) / n:.0f} characters), best of {args.rounds}, {os.cpu_count()} CPUs")
    print(f"direct encode, all at once          : {n / best['direct']:7.1f} chunks/s")
    print(
        f"plugin embed, all at once           : {n / best['plugin']:7.1f} chunks/s  "
        f"({best['direct'] / best['plugin']:.3f}x of direct)"
    )
    print(f"direct encode, groups of {size:<4}       : {n / best['direct-groups']:7.1f} chunks/s")
    print(
        f"plugin via EmbeddingBatcher({size}, 2) : {n / best['batcher']:7.1f} chunks/s  "
        f"({best['direct-groups'] / best['batcher']:.3f}x of direct in groups, "
        f"{best['direct'] / best['batcher']:.3f}x of direct at once)"
    )


if __name__ == "__main__":
    asyncio.run(main())
