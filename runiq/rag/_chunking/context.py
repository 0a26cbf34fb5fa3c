"""What a chunk is indexed under besides its own text: its document's title and its section path.

A chunk cut from the middle of a document loses the words that say what the document is about: its
title and the headings above it. Both are in the chunk's metadata already: ``title`` (a loader's
title, such as a Markdown document's first ``#`` heading or an HTML ``<title>``, or one the caller
set) and ``section`` (the Markdown chunker's heading path, ``"Policy > Scope"``). :func:`indexed_text`
puts them in front of the chunk's content, and every index reads that text: the lexical terms of
every store and the embedding input. The content a search returns is never changed.

Not carried: a title that only repeats the document's file name (a directory source's fallback:
file names such as ``0042.txt`` or ``notes.md`` say little, and would be added to every chunk), and
context words the content already holds (the chunk that starts with its section's heading, a title
that is also the top heading), so the first chunk of a document is indexed as it reads.

Changing this rule changes what is indexed: :data:`INDEXED_TEXT_VERSION` is part of each document's
content hash, so bumping it makes the next ingestion re-index every document.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

from runiq.rag._documents import RagChunk

__all__ = ["INDEXED_TEXT_VERSION", "chunk_context", "chunk_indexed_text", "indexed_text"]

INDEXED_TEXT_VERSION = "indexed=title+section;v1"
_SECTION_SEPARATOR = " > "
_MAX_CONTEXT_CHARACTERS = 1000  # a title and a heading path are lines, not documents


def chunk_context(document_id: str, content: str, metadata: Mapping[str, object]) -> str:
    """The title and section headings of a chunk that its content does not already hold, one per line."""
    parts: list[str] = []
    title = metadata.get("title")
    if isinstance(title, str) and title != _file_stem(document_id):
        parts.append(title)
    section = metadata.get("section")
    if isinstance(section, str):
        parts.extend(section.split(_SECTION_SEPARATOR))
    kept: list[str] = []
    for part in parts:
        line = " ".join(part.split())
        if line and line not in kept and line not in content:
            kept.append(line)
    return "\n".join(kept)[:_MAX_CONTEXT_CHARACTERS]


def _file_stem(document_id: str) -> str:
    """``PurePosixPath(document_id).stem`` by string operations (a path object per chunk cost about 5 us,
    twice per chunk: its terms and its embedding input)."""
    name = document_id.rpartition("/")[2]
    if name in ("", "."):  # a trailing "/" or "/.": path rules decide (never a directory source's id)
        name = PurePosixPath(document_id).name
    dot = name.rfind(".")
    return name[:dot] if 0 < dot < len(name) - 1 else name


def indexed_text(document_id: str, content: str, metadata: Mapping[str, object]) -> str:
    """The text lexical terms and embeddings are computed from: the chunk's context, then its content."""
    context = chunk_context(document_id, content, metadata)
    return f"{context}\n\n{content}" if context else content


def chunk_indexed_text(chunk: RagChunk) -> str:
    """:func:`indexed_text` of a chunk."""
    return indexed_text(chunk.document_id, chunk.content, chunk.metadata)
