"""The document source boundary."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from runiq.rag.documents import RagDocument

__all__ = ["DocumentSource", "SourceFailure", "SourceReadResult"]


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceFailure:
    """One document the source could not deliver. ``code`` is a stable category, never file content."""

    document_id: str
    code: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceReadResult:
    documents: tuple[RagDocument, ...]
    failures: tuple[SourceFailure, ...] = ()


@runtime_checkable
class DocumentSource(Protocol):
    """Delivers an index's documents. Constructing a source must do no I/O; only ``read`` may.

    ``identity`` is stable for the same configuration and may contain a path, so it is hashed before
    anything displays it. Per-document problems are reported as failures, never raised; an exception
    from ``read`` means the whole source is unusable (for example a missing root directory).
    """

    @property
    def source_kind(self) -> str: ...

    @property
    def identity(self) -> str: ...

    async def read(self) -> SourceReadResult: ...
