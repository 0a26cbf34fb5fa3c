"""Render a structured format (DOCX, PPTX, XLSX, HTML) as light Markdown while recording its structure.

One rendering rule for every such loader: ``#`` headings, paragraphs separated by a blank line, pages
(slides) separated by a form feed on a line of its own, so the Markdown chunker sees each heading at a
line start and the page counter sees one form feed per page break. A paragraph line that would read
as a heading gets a backslash, so document text never invents a section.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from runiq.rag._documents import MetadataValue
from runiq.rag._loaders.base import PAGE_BREAK, Heading, LoadedDocument, PageSpan

__all__ = ["MarkdownBuilder", "one_line"]

_BLOCK_BREAK = "\n\n"
_PAGE_SEPARATOR = f"\n{PAGE_BREAK}\n"
_ATX_LIKE = re.compile(r"^( {0,3})(#{1,6}(?:[ \t]|$))", re.MULTILINE)
_SPACES = re.compile(r"\s+")


def one_line(text: str) -> str:
    """Whitespace runs (newlines, tabs, form feeds) collapsed to one space, ends trimmed."""
    return _SPACES.sub(" ", text).strip()


class MarkdownBuilder:
    """Append headings and paragraphs (optionally in pages), then :meth:`build` a :class:`LoadedDocument`.

    Without :meth:`start_page` the document has no pages; after it, every block belongs to the page
    most recently started, and a page with no block still gets its (empty) span.
    """

    def __init__(self) -> None:
        self._pages: list[list[tuple[str, Heading | None]]] = [[]]
        self._paged = False

    def start_page(self) -> None:
        """Begin the next page (slide); the first call begins page 1."""
        if self._paged:
            self._pages.append([])
        self._paged = True

    def heading(self, title: str, level: int) -> None:
        title = one_line(title)
        if title:
            level = max(1, min(level, 6))
            self._pages[-1].append((f"{'#' * level} {title}", Heading(level, title, 0)))

    def paragraph(self, text: str) -> None:
        lines = (line.rstrip() for line in text.replace(PAGE_BREAK, " ").splitlines())
        body = "\n".join(line for line in lines if line.strip())
        if body:
            self._pages[-1].append((_ATX_LIKE.sub(r"\1\\\2", body), None))

    def build(self, *, title: str | None = None, metadata: Mapping[str, MetadataValue] | None = None) -> LoadedDocument:
        parts: list[str] = []
        length = 0
        headings: list[Heading] = []
        spans: list[PageSpan] = []
        for number, blocks in enumerate(self._pages, start=1):
            if number > 1:
                parts.append(_PAGE_SEPARATOR)
                length += len(_PAGE_SEPARATOR)
            page_start = length
            for index, (block, heading) in enumerate(blocks):
                if index:
                    parts.append(_BLOCK_BREAK)
                    length += len(_BLOCK_BREAK)
                if heading is not None:
                    headings.append(Heading(heading.level, heading.title, length))
                parts.append(block)
                length += len(block)
            spans.append(PageSpan(number, page_start, length))
        return LoadedDocument(
            text="".join(parts),
            title=title,
            content_type="text/markdown",
            pages=tuple(spans) if self._paged else (),
            headings=tuple(headings),
            metadata=metadata or {},
        )
