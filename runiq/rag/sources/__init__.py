"""Document sources: where an index's documents come from."""

from __future__ import annotations

from runiq.rag.sources.base import (
    DocumentSource,
    SourceFailure,
    SourceItem,
    SourceReadResult,
    SourceSkip,
    read_all,
)
from runiq.rag.sources.directory import DirectorySource
from runiq.rag.sources.memory import InMemorySource

__all__ = [
    "DirectorySource",
    "DocumentSource",
    "InMemorySource",
    "SourceFailure",
    "SourceItem",
    "SourceReadResult",
    "SourceSkip",
    "read_all",
]
