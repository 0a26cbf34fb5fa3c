"""A BEIR collection scaled to N chunks for throughput benchmarks, and its questions as a query stream.

The documents are repeated up to N chunks; each copy after the first keeps a random 80% of its words,
so copies do not tie exactly (exact duplicates would make the top k a block of equal scores). This is
the rule ``postgres_store.py --cisi`` and ``lexical_postgres.py`` apply (:func:`repeated`).
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np

from benchmarks._beir import load_beir
from benchmarks.beir_eval import plain_query

__all__ = ["copies_for", "dropout", "load_questions", "repeat_with_dropout", "repeated"]


def dropout(text: str, seed: int, keep: float = 0.8) -> str:
    words = text.split()
    mask = np.random.default_rng(seed * 7919 + len(words)).random(len(words)) < keep
    return " ".join(word for word, kept in zip(words, mask, strict=True) if kept)


def repeat_with_dropout(data_dir: Path, rows: int) -> tuple[list[str], list[str]]:
    """``rows`` document ids (``<id>~<copy>``) and texts (title and body, as BEIR lexical baselines use)."""
    collection = load_beir(data_dir)
    doc_ids = list(collection.corpus)
    return repeated(doc_ids, [collection.document_text(d) for d in doc_ids], rows)


def repeated(doc_ids: list[str], texts: list[str], rows: int) -> tuple[list[str], list[str]]:
    """``doc_ids``/``texts`` repeated up to ``rows``: ids ``<id>~<copy>``, every copy after the first with dropout."""
    copies = copies_for(len(doc_ids), rows)
    ids = [f"{doc}~{k}" for k in range(copies) for doc in doc_ids][:rows]
    corpus = [text if k == 0 else dropout(text, seed=k) for k in range(copies) for text in texts][:rows]
    return ids, corpus


def copies_for(documents: int, rows: int) -> int:
    """How many copies of ``documents`` fill ``rows`` (the last one cut short)."""
    return -(-rows // documents)


def load_questions(data_dir: Path, count: int) -> list[str]:
    """Every question in ``queries.jsonl`` (judged or not), double quotes removed, cycled up to ``count``."""
    with (Path(data_dir) / "queries.jsonl").open(encoding="utf-8") as handle:
        texts = [str(json.loads(line)["text"]) for line in handle if line.strip()]
    return list(itertools.islice(itertools.cycle(plain_query(text) for text in texts), count))
