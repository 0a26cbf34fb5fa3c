"""A source over documents the application already holds (tests, examples, generated content)."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

from runiq.rag._documents import RagDocument
from runiq.rag._sources.base import SourceItem, SourceReadResult, read_all

__all__ = ["InMemorySource"]


@dataclass(frozen=True, slots=True)
class InMemorySource:
    documents: tuple[RagDocument, ...]

    def __init__(self, documents: Iterable[RagDocument]) -> None:
        object.__setattr__(self, "documents", tuple(documents))

    @property
    def source_kind(self) -> str:
        return "in-memory"

    @property
    def identity(self) -> str:
        digest = hashlib.sha256("\x1f".join(d.document_id for d in self.documents).encode("utf-8"))
        return f"in-memory:{digest.hexdigest()}"

    async def stream(self) -> AsyncIterator[SourceItem]:
        for document in self.documents:
            yield document

    async def read(self) -> SourceReadResult:
        return await read_all(self)
