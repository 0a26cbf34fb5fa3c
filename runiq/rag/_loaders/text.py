"""Plain text and Markdown: the decoded text as is (no newline rewriting, so content hashes of UTF-8
files are what they were before loaders existed), with the detected encoding in metadata."""

from __future__ import annotations

from dataclasses import dataclass

from runiq.rag._loaders.base import LoadedDocument, LoadOptions
from runiq.rag._loaders.encoding import decode_text
from runiq.rag._loaders.markdown_headings import markdown_headings
from runiq.rag._loaders.text_title import plain_text_title

__all__ = ["MarkdownLoader", "PlainTextLoader"]


@dataclass(frozen=True, slots=True)
class PlainTextLoader:
    """Text as decoded; the first line is the title when it is laid out as a heading (a short line on
    its own above the text: :func:`~runiq.rag._loaders.text_title.plain_text_title`). Register another
    instance for more text formats:
    ``PlainTextLoader("restructuredtext", frozenset({".rst"}), frozenset({"text/x-rst"}))``."""

    name: str = "text"
    extensions: frozenset[str] = frozenset({".txt", ".text"})
    media_types: frozenset[str] = frozenset({"text/plain"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        text, encoding = decode_text(data)
        return LoadedDocument(text=text, title=plain_text_title(text), metadata={"encoding": encoding})


@dataclass(frozen=True, slots=True)
class MarkdownLoader:
    """Markdown stays Markdown (the heading-aware chunker reads it); the first level-1 heading is the
    title. Headings come from a linear scan that follows CommonMark's heading rules
    (:mod:`~runiq.rag._loaders.markdown_headings`), so a ``#`` inside a code block is not one."""

    name: str = "markdown"
    extensions: frozenset[str] = frozenset({".md", ".markdown"})
    media_types: frozenset[str] = frozenset({"text/markdown", "text/x-markdown"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        text, encoding = decode_text(data)
        headings = markdown_headings(text)
        title = next((h.title for h in headings if h.level == 1), None)
        return LoadedDocument(
            text=text,
            title=title,
            content_type="text/markdown",
            headings=headings,
            metadata={"encoding": encoding},
        )
