"""Where a chunk lies in its document: character offsets, and the page for a paged document.

Every chunk records ``start_offset`` and ``end_offset`` (``document.content[start:end]`` is the chunk)
in its metadata, so every store keeps them and every retrieval hit carries them. A document whose
text holds page breaks (loaders join PDF pages and slides with a form feed, as the reference does)
gives each chunk its ``page`` (from 1); a document without one has no page. Such a document is split
page by page (:func:`split_by_page`), so a chunk never runs over a break and its page is the page of
all its text: a citation "file, page" is right for every word of the chunk. (The reference splits
across breaks and gives the page a chunk starts on, which cites page 1 for text on page 2.)
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

from runiq.rag._chunking.windows import Span
from runiq.rag._documents import MetadataValue
from runiq.rag._loaders.base import PAGE_BREAK

__all__ = ["END_OFFSET", "PAGE", "START_OFFSET", "ChunkPositions", "split_by_page"]

START_OFFSET = "start_offset"
END_OFFSET = "end_offset"
PAGE = "page"


class ChunkPositions:
    """``positions(start, end)``: the position metadata of a chunk of ``content``."""

    def __init__(self, content: str) -> None:
        breaks: list[int] = []
        at = content.find(PAGE_BREAK)
        while at >= 0:
            breaks.append(at)
            at = content.find(PAGE_BREAK, at + 1)
        self._breaks = breaks

    def __call__(self, start: int, end: int) -> dict[str, MetadataValue]:
        metadata: dict[str, MetadataValue] = {START_OFFSET: start, END_OFFSET: end}
        if self._breaks:
            # Breaks at or before the start: a chunk that begins with a break is on the page after it.
            metadata[PAGE] = bisect.bisect_right(self._breaks, start) + 1
        return metadata


def split_by_page(content: str, split: Callable[[str], list[Span]]) -> list[Span]:
    """``split(content)``, one page at a time when ``content`` has page breaks, with offsets into
    ``content``; a blank page gives no chunk."""
    if PAGE_BREAK not in content:
        return split(content)
    spans: list[Span] = []
    offset = 0
    for page in content.split(PAGE_BREAK):
        if page.strip():
            spans.extend((offset + start, text) for start, text in split(page))
        offset += len(page) + len(PAGE_BREAK)
    return spans
