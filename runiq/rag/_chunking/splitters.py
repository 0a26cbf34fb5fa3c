"""Chunkers built on ``semantic-text-splitter``.

We use that library (a small Rust-backed package with no Python dependencies) rather than a
hand-written window: it splits at the largest semantic unit that fits (paragraphs, sentences, words,
graphemes; for Markdown, sections and blocks), supports overlap, and reports character offsets, which
we need for exact ``start``/``end`` values and stable identities. Its cost grows faster than the
input, so it is called on bounded windows of the document (:mod:`runiq.rag._chunking.windows`).

A document the splitter cannot take (text with a lone surrogate, or an input that makes the Rust
library panic) fails with a content-free :class:`RagValidationError`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable
from typing import Any

from semantic_text_splitter import MarkdownSplitter, TextSplitter

from runiq.rag._chunking.base import ChunkingOptions
from runiq.rag._chunking.blocks import MarkdownRestarts
from runiq.rag._chunking.positions import ChunkPositions, split_by_page
from runiq.rag._chunking.windows import Span, split_in_windows
from runiq.rag._documents import RagChunk, RagDocument, chunk_id_for
from runiq.rag._errors import RagValidationError

__all__ = ["MarkdownChunker", "TextChunker"]

_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


class _SplitterChunker:
    def __init__(self, options: ChunkingOptions, splitter: Any) -> None:
        self._options = options
        self._splitter = splitter

    def chunk(self, document: RagDocument) -> list[RagChunk]:
        if not document.content.strip():
            return []
        pieces = split_by_page(document.content, self._split)
        positions = ChunkPositions(document.content)
        chunks: list[RagChunk] = []
        for ordinal, (start, text) in enumerate(pieces):
            metadata = dict(document.metadata)
            metadata.update(self._extra_metadata(document, start))
            metadata.update(positions(start, start + len(text)))
            chunks.append(
                RagChunk(
                    document_id=document.document_id,
                    chunk_id=chunk_id_for(document.document_id, ordinal),
                    ordinal=ordinal,
                    content=text,
                    start=start,
                    end=start + len(text),
                    metadata=metadata,
                )
            )
        return chunks

    def _split(self, content: str) -> list[Span]:
        # Errors are raised outside the except blocks: a UnicodeEncodeError quotes the text it could
        # not encode, and neither it nor a Rust panic may stay reachable as __context__.
        message = "The document text could not be split into chunks."
        try:
            return split_in_windows(
                self._splitter, content, self._options.max_characters, restart_at=self._restarts(content)
            )
        except UnicodeError:  # a lone surrogate
            message = "The document text is not valid Unicode."
        except BaseException as exc:
            # A panic in the Rust splitter is a pyo3 PanicException, which is not an Exception.
            if type(exc).__module__ != "pyo3_runtime":
                raise
        raise RagValidationError(message)

    def _restarts(self, content: str) -> Callable[[int], bool] | None:
        return None

    def _extra_metadata(self, document: RagDocument, start: int) -> dict[str, str]:
        return {}


class TextChunker(_SplitterChunker):
    """Size + overlap chunking at the largest natural boundary (paragraph, sentence, word) that fits."""

    def __init__(self, options: ChunkingOptions) -> None:
        super().__init__(options, TextSplitter(options.max_characters, overlap=options.overlap))


class MarkdownChunker(_SplitterChunker):
    """Heading-aware chunking; each chunk records its section path (``"Policy > Scope"``) as ``section``."""

    def __init__(self, options: ChunkingOptions) -> None:
        super().__init__(options, MarkdownSplitter(options.max_characters, overlap=options.overlap))
        self._cache: tuple[str, list[int], list[str]] | None = None

    def _restarts(self, content: str) -> Callable[[int], bool] | None:
        return MarkdownRestarts(content)

    def _extra_metadata(self, document: RagDocument, start: int) -> dict[str, str]:
        positions, paths = self._section_index(document.content)
        at = bisect.bisect_right(positions, start) - 1
        return {"section": paths[at]} if at >= 0 and paths[at] else {}

    def _section_index(self, content: str) -> tuple[list[int], list[str]]:
        if self._cache is not None and self._cache[0] is content:
            return self._cache[1], self._cache[2]
        positions: list[int] = []
        paths: list[str] = []
        stack: list[tuple[int, str]] = []
        for match in _HEADING.finditer(content):
            level = len(match.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, match.group(2).strip()))
            positions.append(match.start())
            paths.append(" > ".join(title for _, title in stack))
        self._cache = (content, positions, paths)
        return positions, paths
