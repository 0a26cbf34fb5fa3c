"""Document sources: where an index's documents come from."""

from __future__ import annotations

from runiq.rag.sources.base import (
    DocumentSource,
    ReadChooser,
    SourceFailure,
    SourceItem,
    SourceReadResult,
    SourceSkip,
    SourceStamp,
    SourceUnchanged,
    StampedItem,
    StampedSource,
    read_all,
)
from runiq.rag.sources.directory import DirectorySource
from runiq.rag.sources.memory import InMemorySource

__all__ = [
    "DirectorySource",
    "DocumentSource",
    "InMemorySource",
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
