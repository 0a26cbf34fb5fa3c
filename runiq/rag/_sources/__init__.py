"""Document sources: where an index's documents come from."""

from __future__ import annotations

from runiq.rag._sources.base import (
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
from runiq.rag._sources.directory import DirectorySource
from runiq.rag._sources.memory import InMemorySource

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
