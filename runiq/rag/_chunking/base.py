"""The chunker boundary and its options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from runiq.rag._errors import RagConfigurationError

if TYPE_CHECKING:
    from runiq.rag._documents import RagChunk, RagDocument

__all__ = ["Chunker", "ChunkingOptions", "chunker_for"]

MARKDOWN_TYPES = frozenset({"text/markdown", "text/x-markdown"})


@dataclass(frozen=True, slots=True, kw_only=True)
class ChunkingOptions:
    """Size and overlap in characters. Validated on construction so registration fails early."""

    max_characters: int = 1000
    overlap: int = 100

    def __post_init__(self) -> None:
        if self.max_characters <= 0:
            raise RagConfigurationError("Chunking max_characters must be greater than 0.")
        if self.overlap < 0:
            raise RagConfigurationError("Chunking overlap must be greater than or equal to 0.")
        if self.overlap >= self.max_characters:
            raise RagConfigurationError("Chunking overlap must be smaller than max_characters.")

    @property
    def fingerprint(self) -> str:
        """Part of each document's content hash: changing the chunking re-ingests the document."""
        return f"chunking:max={self.max_characters};overlap={self.overlap}"


class Chunker(Protocol):
    """Pure, synchronous and deterministic: the same document always gives the same chunks."""

    def chunk(self, document: RagDocument) -> list[RagChunk]: ...


def chunker_for(document: RagDocument, options: ChunkingOptions) -> Chunker:
    """Markdown documents get the heading-aware chunker; everything else the plain text one."""
    from runiq.rag._chunking.splitters import MarkdownChunker, TextChunker

    if document.content_type in MARKDOWN_TYPES:
        return MarkdownChunker(options)
    return TextChunker(options)
