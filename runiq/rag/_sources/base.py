"""The document source boundary.

A source streams its documents: ``stream()`` yields each :class:`RagDocument` (or a
:class:`SourceFailure` for one it could not deliver, or a :class:`SourceSkip` for a file it passed
over on purpose) as it is read, so ingestion holds a bounded
window of documents, never the whole corpus. :func:`read_all` collects a stream for callers that want
everything at once (tests, small sources).

A source may also offer :class:`StampedSource`: it lists its candidates with a *stamp* (what decides a
document without reading it, such as a file's size and modification time) and reads only those the
ingestion chooses, so a re-ingestion of an unchanged corpus reads nothing (see
:mod:`runiq.rag._sources.stamps`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from runiq.rag._documents import RagDocument

__all__ = [
    "DocumentSource",
    "ReadChooser",
    "SourceFailure",
    "SourceItem",
    "SourceReadResult",
    "SourceSkip",
    "SourceStamp",
    "SourceUnchanged",
    "StampedItem",
    "StampedSource",
    "read_all",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceFailure:
    """One document the source could not deliver. ``code`` is a stable category, never file content."""

    document_id: str
    code: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceSkip:
    """A file the source passed over on purpose, such as one no loader reads: neither a document nor a
    failure. A run counts these as ``skipped_files``; a stored document of that id is deleted like any
    the source no longer delivers."""

    document_id: str
    reason: str = "unsupported_format"


SourceItem = RagDocument | SourceFailure | SourceSkip


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceReadResult:
    documents: tuple[RagDocument, ...]
    failures: tuple[SourceFailure, ...] = ()
    skipped: tuple[SourceSkip, ...] = ()


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


@dataclass(frozen=True, slots=True)
class SourceStamp:
    """A candidate document listed without being read, and its stamp: a string that changes whenever the
    document the source would deliver may change (a file's size, modification time, the loader that reads
    it...). ``stamp`` is None when the source cannot vouch for the candidate unread (a timestamp too recent
    to trust, a symlink): it must be read."""

    document_id: str
    stamp: str | None


@dataclass(frozen=True, slots=True)
class SourceUnchanged:
    """Candidates the ingestion chose not to read (their stored stamps matched): still the source's. One
    item names a run of consecutive candidates, so an unchanged corpus streams a few items per window."""

    document_ids: tuple[str, ...]


StampedItem = SourceItem | SourceUnchanged
# Given a window of listed candidates, answers for each whether to read it (in the same order).
ReadChooser = Callable[[Sequence[SourceStamp]], Awaitable[Sequence[bool]]]


@runtime_checkable
class StampedSource(Protocol):
    """Optional capability of a :class:`DocumentSource`: change detection without reading everything.

    ``stream_changed`` lists candidates a window at a time, cheaply (a ``stat``, no read), and passes each
    window to ``choose``; it then yields, in its usual order, what ``stream`` would have yielded for the
    chosen candidates, :class:`SourceUnchanged` items naming every other candidate, and its failures and
    skips as ``stream`` does. Listing runs off the event loop, like reading.
    """

    def stream_changed(self, choose: ReadChooser) -> AsyncIterator[StampedItem]: ...


async def read_all(source: DocumentSource) -> SourceReadResult:
    """Every document and failure of a source, collected (memory grows with the source)."""
    documents: list[RagDocument] = []
    failures: list[SourceFailure] = []
    skipped: list[SourceSkip] = []
    async for item in source.stream():
        if isinstance(item, SourceFailure):
            failures.append(item)
        elif isinstance(item, SourceSkip):
            skipped.append(item)
        else:
            documents.append(item)
    return SourceReadResult(documents=tuple(documents), failures=tuple(failures), skipped=tuple(skipped))
