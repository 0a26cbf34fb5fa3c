"""Document sources: where an index's documents come from."""

from __future__ import annotations

from runiq.rag.sources.base import DocumentSource, SourceFailure, SourceReadResult
from runiq.rag.sources.directory import DirectorySource
from runiq.rag.sources.memory import InMemorySource

__all__ = ["DirectorySource", "DocumentSource", "InMemorySource", "SourceFailure", "SourceReadResult"]
