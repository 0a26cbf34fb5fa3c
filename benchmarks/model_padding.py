"""Tokens through all-MiniLM-L6-v2 for CISI's chunks: where item 2's time goes, independent of load.

    python benchmarks/model_padding.py [--data-dir DIR] [--cisi DIR]

The model's ``forward`` is replaced by a stub that counts each pass's ``batch x padded length`` and
returns constant vectors, so the same texts go through the same ``encode`` calls, batching and
tokenisation as in ``managed_ingestion.py model`` without the minutes of model time a shared machine
makes noisy. Tokens through the model are what a CPU encode costs (with ``max_seq_length`` 256 the
linear layers dominate attention), so their ratio predicts the time ratio. Rows: one
``SentenceTransformer.encode`` of every chunk (the item's reference), ``encode`` in calls of 64 texts,
the plugin's ``embed_sync`` of every chunk (its own order), and a managed run (``RagIngestionManager``,
in-memory store, the same host layout as ``managed_ingestion.py model``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from benchmarks import managed_ingestion as bench
from benchmarks._corpus_files import chunk_texts, cisi_documents
from runiq.rag import RagIngestionManager
from runiq.rag._chunking import ChunkingOptions
from runiq.rag.providers import EmbeddingInputKind

_counted = {"tokens": 0, "real_tokens": 0, "passes": 0}


def _count_passes() -> None:
    import torch
    from sentence_transformers import SentenceTransformer

    def forward(self: Any, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask = features["attention_mask"]
        _counted["tokens"] += mask.numel()
        _counted["real_tokens"] += int(mask.sum())
        _counted["passes"] += 1
        return {**features, "sentence_embedding": torch.ones(mask.shape[0], 384)}

    SentenceTransformer.forward = forward  # type: ignore[method-assign]


def _taken() -> dict[str, int]:
    out = dict(_counted)
    _counted.update(dict.fromkeys(_counted, 0))
    return out


async def _managed(root: Path, warm: Path) -> dict[str, int]:
    args = argparse.Namespace(store="memory", repeat=1, store_options={})
    async with bench.model_host(args, root, warm, None, []).build() as host:
        manager = host.services.get(RagIngestionManager)
        await bench.timed_run(manager, "warm")
        _taken()
        await bench.timed_run(manager, "r0")
        return _taken()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=bench.DEFAULT_DATA_DIR)
    parser.add_argument("--cisi", type=Path, default=bench.DEFAULT_CISI)
    args = parser.parse_args()
    _count_passes()
    from runiq_sentence_transformers import SentenceTransformerEmbedder

    root = cisi_documents(args.data_dir, args.cisi, None)
    warm = cisi_documents(args.data_dir, args.cisi, 16)
    chunks = chunk_texts(root, ChunkingOptions())
    model, batch_size = bench.direct_model()
    _taken()
    rows: dict[str, dict[str, int]] = {}
    model.encode(chunks, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=False)
    rows["one encode"] = _taken()
    for start in range(0, len(chunks), 64):
        model.encode(chunks[start : start + 64], batch_size=batch_size, show_progress_bar=False)
    rows["encode in calls of 64"] = _taken()
    plugin = SentenceTransformerEmbedder(model, model_name="padding", batch_size=batch_size)
    plugin.embed_sync(chunks, EmbeddingInputKind.DOCUMENT)
    rows["plugin, one call"] = _taken()
    rows["managed"] = asyncio.run(_managed(root, warm))
    reference = rows["one encode"]["tokens"]
    print(f"{len(chunks)} chunks, batch size {batch_size}, commit {bench.environment()['commit'][:10]}")
    for name, row in rows.items():
        padding = row["tokens"] - row["real_tokens"]
        print(
            f"{name:24} {row['tokens']:>9,} tokens  {padding:>7,} padding  {row['passes']:>3} passes"
            f"  one encode / this {reference / row['tokens']:.3f}"
        )


if __name__ == "__main__":
    main()
