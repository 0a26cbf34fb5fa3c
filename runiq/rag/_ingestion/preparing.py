"""Preparing documents for embedding: content hash and chunks, in a worker thread, a window at a time.

Whatever goes wrong with one document is that document's failure with a content-free code:
``invalid_text`` (a lone surrogate, which no provider or durable store accepts), ``document_failed``,
``chunking_failed``. A document whose stored hash equals its new one is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from runiq.rag._chunking.base import ChunkingOptions, chunker_for
from runiq.rag._documents import RagChunk, RagDocument
from runiq.rag._errors import RagValidationError
from runiq.rag._threads import OwnThread

__all__ = ["Pending", "Prepared", "Unusable", "prepare_off_loop", "prepare_some"]

# At most this many documents are prepared per worker hop, so a cancelled run's hop ends soon.
_PREPARE_DOCUMENTS = 256
# One thread prepares for every run (see ``_threads``: one malloc arena, and the work holds the GIL).
_PREPARING = OwnThread("runiq-prepare")

T = TypeVar("T")


@dataclass(slots=True)
class Pending:
    """A new or changed document, chunked, waiting for vectors and its atomic write."""

    document: RagDocument
    stored_hash: str | None
    content_hash: str
    chunks: list[RagChunk]
    stamp: str | None = None  # what its source listed it with (stored beside the content hash)


@dataclass(frozen=True, slots=True)
class Unusable:
    """A document that could not be prepared: a stable code and the exception's class name."""

    document: RagDocument
    code: str
    error: str


# What preparing one document gives: work to do, a failure, or None when the stored version is current.
Prepared = Pending | Unusable | None


async def prepare_off_loop(work: Callable[[], T]) -> T:
    """``work`` (a :func:`prepare_some` call, bound with :func:`functools.partial`) in the preparing thread."""
    return await _PREPARING.run(work)


def prepare_some(
    documents: Sequence[RagDocument],
    start: int,
    stored: Mapping[str, str],
    *,
    fingerprint: str,
    chunking: ChunkingOptions,
) -> tuple[list[Prepared], int]:
    """In a worker thread: prepare up to ``_PREPARE_DOCUMENTS`` documents from ``start``; the outcomes and
    the position after them."""
    end = min(len(documents), start + _PREPARE_DOCUMENTS)
    prepared = [
        _prepare(document, stored.get(document.document_id), fingerprint, chunking) for document in documents[start:end]
    ]
    return prepared, end


def _prepare(document: RagDocument, stored_hash: str | None, fingerprint: str, chunking: ChunkingOptions) -> Prepared:
    try:
        content_hash = document.content_hash(fingerprint)
    except RagValidationError:
        return Unusable(document, "invalid_text", "RagValidationError")
    except Exception as exc:
        return Unusable(document, "document_failed", type(exc).__name__)
    if stored_hash == content_hash:
        return None
    try:
        chunks = chunker_for(document, chunking).chunk(document)
    except Exception as exc:
        return Unusable(document, "chunking_failed", type(exc).__name__)
    return Pending(document=document, stored_hash=stored_hash, content_hash=content_hash, chunks=chunks)
