"""Corpora written to disk as directories of files, for benchmarks that ingest through ``use_directory``.

Each corpus lives in its own directory under a data directory and is written once: a
``.complete.json`` marker holding the parameters is written last, and a directory whose marker
matches the requested parameters is reused as it is (a half-written one is rewritten). Files are
sharded ``NNNN/NNNNNNN.txt``, 1,000 per subdirectory, so they are read with ``recursive=True``.

* :func:`chunk_corpus`: files of ``per_file`` paragraphs of about 500 characters each (450-550,
  cut at a word boundary), the words drawn from CISI (``source="cisi"``: a random window of the
  collection's running text with 20% of its words dropped, so no two files are alike) or from a
  synthetic Zipfian vocabulary (``source="synthetic"``).
* :func:`line_corpus`: one-line files (about 60-100 characters of synthetic words, numbered or not).
* :func:`cisi_documents`: one file per CISI document, ``title\\n\\ntext`` (the BEIR convention).
* :func:`document_files`: one file per document of any BEIR collection, the title as a Markdown
  ``# `` heading or a plain first line, as a person writing the file would put it
  (``beir_eval.py --source files``).

:func:`chunk_texts` reproduces, outside any timer, the chunks ingestion produces from those files:
each file becomes the document :class:`~runiq.rag.DirectorySource` yields (id = relative path,
``text/plain``) and goes through runiq's text chunker with the given options.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._beir import BeirCollection, load_beir
from runiq.rag import RagDocument
from runiq.rag._chunking import ChunkingOptions, TextChunker
from runiq.rag._loaders.text_title import plain_text_title
from runiq.rag.providers import chunk_indexed_text

__all__ = [
    "chunk_corpus",
    "chunk_texts",
    "cisi_documents",
    "corpus_files",
    "line_corpus",
    "document_files",
    "document_path",
]

_MARKER = ".complete.json"
_SHARD = 1000


def corpus_files(root: Path) -> list[Path]:
    """The corpus's files in the order ingestion reads them (by relative path)."""
    return sorted(path for path in root.rglob("*.txt") if path.is_file())


def _written(root: Path, params: dict[str, Any], write: Callable[[Path], None]) -> Path:
    marker = root / _MARKER
    if marker.is_file() and json.loads(marker.read_text()) == params:
        return root
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    write(root)
    marker.write_text(json.dumps(params))
    return root


def _write_sharded(root: Path, texts: Iterator[str]) -> None:
    for i, text in enumerate(texts):
        shard = root / f"{i // _SHARD:04d}"
        if i % _SHARD == 0:
            shard.mkdir()
        (shard / f"{i:07d}.txt").write_text(text, encoding="utf-8")


def _cisi_words(cisi: Path) -> np.ndarray:
    collection = load_beir(cisi)
    words = [word for doc in collection.corpus for word in collection.document_text(doc).split()]
    return np.asarray(words, dtype=object)


def _synthetic_vocabulary(rng: np.random.Generator, size: int = 20_000) -> tuple[np.ndarray, np.ndarray]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    lengths = rng.integers(3, 11, size)
    vocabulary = np.asarray(["".join(rng.choice(letters, n)) for n in lengths], dtype=object)
    weights = 1.0 / np.arange(1, size + 1)  # Zipf: a few common words, a long tail
    return vocabulary, weights / weights.sum()


def _paragraph(words: np.ndarray, rng: np.random.Generator, target: int) -> str:
    """About ``target`` characters: a window of ``words`` with 20% dropped, cut at a word boundary."""
    start = int(rng.integers(len(words)))
    window = np.take(words, range(start, start + target // 3), mode="wrap")
    kept = window[rng.random(len(window)) < 0.8]
    text = " ".join(kept)
    cut = text.rfind(" ", 0, target + 1)
    return text[: cut if cut > 0 else target]


def chunk_corpus(data_dir: Path, *, files: int, per_file: int, source: str, cisi: Path, seed: int = 7) -> Path:
    """``files`` files of ``per_file`` ~500-character paragraphs separated by blank lines."""
    params = {"kind": "chunks", "files": files, "per_file": per_file, "source": source, "seed": seed}
    root = data_dir / f"chunks-{source}-{files}x{per_file}"

    def write(root: Path) -> None:
        rng = np.random.default_rng(seed)
        if source == "cisi":
            words = _cisi_words(cisi)
        else:
            vocabulary, weights = _synthetic_vocabulary(rng)
            words = rng.choice(vocabulary, size=2_000_000, p=weights)
        texts = (
            "\n\n".join(_paragraph(words, rng, int(rng.integers(450, 551))) for _ in range(per_file))
            for _ in range(files)
        )
        _write_sharded(root, texts)

    return _written(root, params, write)


def line_corpus(data_dir: Path, *, files: int, numbered: bool = True, seed: int = 11) -> Path:
    """``files`` one-line files of ten synthetic words (a 20,000-word Zipfian vocabulary), each starting
    with its own number when ``numbered`` (no two alike, and the vocabulary grows with the corpus, as
    identifiers do in real text); without, the vocabulary stays that of the words."""
    params = {"kind": "lines", "files": files, "numbered": numbered, "seed": seed}
    root = data_dir / (f"lines-{files}" if numbered else f"lines-{files}-plain")

    def write(root: Path) -> None:
        rng = np.random.default_rng(seed)
        vocabulary, weights = _synthetic_vocabulary(rng)
        words = rng.choice(vocabulary, size=(files, 10), p=weights)
        lines = ((f"line {i} " if numbered else "") + " ".join(row) + "\n" for i, row in enumerate(words))
        _write_sharded(root, lines)

    return _written(root, params, write)


def cisi_documents(data_dir: Path, cisi: Path, limit: int | None = None) -> Path:
    """One file per CISI document (``title\\n\\ntext``), the first ``limit`` documents."""
    collection = load_beir(cisi)
    ids = list(collection.corpus)[:limit]
    params = {"kind": "cisi", "collection": str(cisi.resolve()), "documents": len(ids)}
    root = data_dir / f"cisi-{len(ids)}"
    return _written(root, params, lambda r: _write_sharded(r, (collection.document_text(d) for d in ids)))


def document_path(ordinal: int, suffix: str) -> str:
    """The relative path (the document id a directory source gives) of the ``ordinal``-th document's file."""
    return f"{ordinal // _SHARD:04d}/{ordinal:07d}{suffix}"


def document_files(data_dir: Path, collection: BeirCollection, *, markdown: bool = True) -> Path:
    """One file per document, in corpus order (:func:`document_path`), written as a person would: in
    Markdown (``.md``) the title is a ``# `` heading, in plain text (``.txt``) the first line; a blank
    line, then the text. A document without a title is its text alone. File names are ordinals."""
    ids = list(collection.corpus)
    suffix = ".md" if markdown else ".txt"
    params = {"kind": "documents", "collection": collection.name, "documents": len(ids), "suffix": suffix}
    root = data_dir / f"{collection.name}-{suffix[1:]}"

    def write(root: Path) -> None:
        for ordinal, doc_id in enumerate(ids):
            title, text = collection.corpus[doc_id]
            path = root / document_path(ordinal, suffix)
            path.parent.mkdir(exist_ok=True)
            heading = ("# " if markdown else "") + title.strip()
            path.write_text(f"{heading}\n\n{text}\n" if title.strip() else f"{text}\n", encoding="utf-8")

    return _written(root, params, write)


def chunk_texts(root: Path, options: ChunkingOptions) -> list[str]:
    """The texts ingestion embeds for ``root``'s files, in file order: each chunk under its document's
    title (the text loader's heading-like first line, else the file name) as the pipeline indexes it."""
    chunker = TextChunker(options)
    out: list[str] = []
    for path in corpus_files(root):
        relative = path.relative_to(root).as_posix()
        text = path.read_bytes().decode("utf-8-sig")
        title = plain_text_title(text) or path.stem
        document = RagDocument(document_id=relative, content=text, title=title, metadata={"title": title})
        out.extend(chunk_indexed_text(chunk) for chunk in chunker.chunk(document))
    return out
