"""Chunkers: turn a :class:`RagDocument` into ordered, offset-exact :class:`RagChunk` objects."""

from __future__ import annotations

from runiq.rag._chunking.base import Chunker, ChunkingOptions, chunker_for
from runiq.rag._chunking.splitters import MarkdownChunker, TextChunker

__all__ = ["Chunker", "ChunkingOptions", "MarkdownChunker", "TextChunker", "chunker_for"]
