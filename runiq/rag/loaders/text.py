"""Plain text and Markdown: the decoded text as is (no newline rewriting, so content hashes of UTF-8
files are what they were before loaders existed), with the detected encoding in metadata."""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

from runiq.rag.loaders.base import Heading, LoadedDocument, LoadOptions, guarded, parser_failures
from runiq.rag.loaders.builder import one_line
from runiq.rag.loaders.deferred import import_when_loading
from runiq.rag.loaders.encoding import decode_text

__all__ = ["MarkdownLoader", "PlainTextLoader"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_FAILURES = parser_failures()
import_when_loading("markdown_it")


@dataclass(frozen=True, slots=True)
class PlainTextLoader:
    """Text as decoded. Register another instance for more text formats:
    ``PlainTextLoader("restructuredtext", frozenset({".rst"}), frozenset({"text/x-rst"}))``."""

    name: str = "text"
    extensions: frozenset[str] = frozenset({".txt", ".text"})
    media_types: frozenset[str] = frozenset({"text/plain"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        text, encoding = decode_text(data)
        return LoadedDocument(text=text, metadata={"encoding": encoding})


@dataclass(frozen=True, slots=True)
class MarkdownLoader:
    """Markdown stays Markdown (the heading-aware chunker reads it); the first level-1 heading is the
    title. Headings come from a CommonMark parser (markdown-it-py, already installed with ``rich``), so a
    ``#`` inside a code block is not one."""

    name: str = "markdown"
    extensions: frozenset[str] = frozenset({".md", ".markdown"})
    media_types: frozenset[str] = frozenset({"text/markdown", "text/x-markdown"})

    def load(self, data: bytes, *, options: LoadOptions) -> LoadedDocument:
        text, encoding = decode_text(data)
        headings = guarded(lambda: _headings(text), _FAILURES)
        title = next((h.title for h in headings if h.level == 1), None)
        return LoadedDocument(
            text=text,
            title=title,
            content_type="text/markdown",
            headings=headings,
            metadata={"encoding": encoding},
        )


def _headings(text: str) -> tuple[Heading, ...]:
    from markdown_it import MarkdownIt

    line_starts = [0] + [match.end() for match in _LINE_BREAK.finditer(text)]
    tokens = MarkdownIt("commonmark").parse(text)
    headings: list[Heading] = []
    for opening, inline in itertools.pairwise(tokens):
        if opening.type == "heading_open" and opening.map is not None and inline.type == "inline":
            title = one_line(inline.content)
            if title:
                headings.append(Heading(int(opening.tag[1:]), title, line_starts[opening.map[0]]))
    return tuple(headings)
