"""The document source boundary.

A source streams its documents: ``stream()`` yields each :class:`RagDocument` (or a
:class:`SourceFailure` for one it could not deliver) as it is read, so ingestion holds a bounded
window of documents, never the whole corpus. :func:`read_all` collects a stream for callers that want
everything at once (tests, small sources).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from runiq.rag.documents import RagDocument

__all__ = ["DocumentSource", "SourceFailure", "SourceItem", "SourceReadResult", "read_all"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceFailure:
    """One document the source could not deliver. ``code`` is a stable category, never file content."""

    document_id: str
    code: str


SourceItem = RagDocument | SourceFailure


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceReadResult:
    documents: tuple[RagDocument, ...]
    failures: tuple[SourceFailure, ...] = ()


@runtime_checkable
class DocumentSource(Protocol):
    """Delivers an index's documents. Constructing a source must do no I/O; only ``stream`` may.

    ``identity`` is stable for the same configuration and may contain a path, so it is hashed before
    anything displays it. Per-document problems are yielded as failures, never raised; an exception
    from the stream means the whole source is unusable (for example a missing root directory), and
    ingestion then deletes nothing. Blocking work (file I/O, parsing) must run off the event loop.
    """

    @property
    def source_kind(self) -> str: ...

    @property
    def identity(self) -> str: ...

    def stream(self) -> AsyncIterator[SourceItem]: ...


async def read_all(source: DocumentSource) -> SourceReadResult:
    """Every document and failure of a source, collected (memory grows with the source)."""
    documents: list[RagDocument] = []
    failures: list[SourceFailure] = []
    async for item in source.stream():
        if isinstance(item, SourceFailure):
            failures.append(item)
        else:
            documents.append(item)
    return SourceReadResult(documents=tuple(documents), failures=tuple(failures))
