"""Where a chunk lies in its document: character offsets, and the page for a paged document.

Every chunk records ``start_offset`` and ``end_offset`` (``document.content[start:end]`` is the chunk)
in its metadata, so every store keeps them and every retrieval hit carries them. A document whose
text holds page breaks (loaders join PDF pages and slides with a form feed, as the reference does)
gives each chunk the ``page`` (from 1) on which its first character lies; a document without one has
no page. A chunk that runs over a break keeps the page it starts on.
"""

from __future__ import annotations

import bisect

from runiq.rag.documents import MetadataValue
from runiq.rag.loaders.base import PAGE_BREAK

__all__ = ["END_OFFSET", "PAGE", "START_OFFSET", "ChunkPositions"]

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
