"""Bounded splitter calls, so chunking a document costs time linear in its length.

``semantic-text-splitter`` re-examines the rest of its input for every chunk it produces: the ranges
of every remaining line break, and the first sentence and the first word from the cursor, which in
a text without whitespace is the whole remaining run. One call over a large document is therefore
quadratic: 2 MB without whitespace took 43 s, 2 MB of plain prose 2.8 s. Here the splitter only ever
sees a window of the document:

* A window is ``WINDOW_CHUNKS * max_characters`` characters from the current position. A chunk that
  starts at least ``2 * max_characters`` before the window's end was decided by text inside the
  window, as in one call over the whole document, and is kept; the next window starts where the
  first chunk not kept starts. On ordinary text the chunks are the ones a single call gives.
* A whitespace-free run longer than ``2 * max_characters`` (a base64 blob, minified code, a
  ``2 MB`` line of one character) ends the window ``max_characters + 64`` characters into the run,
  and only chunks starting by the run's start are kept, so each call reads about one chunk of the
  run. The run is cut where the splitter itself cuts it (grapheme or word boundaries).
* Every window starts at a chunk start the splitter chose, so no grapheme is ever split. Markdown
  prefers to restart at a chunk that begins a top-level block, where a fresh parse of the rest
  agrees with the parse of the whole document (see :mod:`runiq.rag._chunking.blocks`).

This runs in a worker thread during ingestion; the splitter releases the GIL, and every scan that
holds it (``re``) reads one window at a time, so the event loop is never kept waiting long.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Protocol

__all__ = ["WINDOW_CHUNKS", "Span", "TextSplitterLike", "split_in_windows"]

WINDOW_CHUNKS = 8
# How far past a long run's start a window reaches: enough that the run's first word and sentence
# are longer than a chunk (so the splitter cuts the run as it would in the whole text), and short
# enough that dictionary word segmentation (CJK) stays cheap.
_RUN_LOOKAHEAD = 64

Span = tuple[int, str]  # (start offset in characters, chunk text)


class TextSplitterLike(Protocol):
    """What we use of ``semantic_text_splitter.TextSplitter`` and ``MarkdownSplitter``."""

    def chunk_indices(self, text: str) -> list[tuple[int, str]]: ...


def split_in_windows(
    splitter: TextSplitterLike,
    text: str,
    max_characters: int,
    *,
    restart_at: Callable[[int], bool] | None = None,
) -> list[Span]:
    """The splitter's chunks of ``text``, computed window by window (see the module docstring).

    ``restart_at(offset)`` says whether a chunk starting at ``offset`` is a good place to start the
    next window; without it any chunk start will do.
    """
    # Anchored at a run's start, so a run a little shorter than the minimum is read once, not once per
    # character. Searched one window at a time: ``re`` holds the GIL while it scans.
    long_run = re.compile(rf"(?<!\S)\S{{{2 * max_characters},}}")
    spans: list[Span] = []
    position = 0
    while True:
        end, keep_until = _window(text, position, max_characters, long_run)
        pieces = [(position + start, piece) for start, piece in splitter.chunk_indices(text[position:end])]
        if end == len(text):
            _extend(spans, pieces)
            return spans
        kept, position = _settled(pieces, keep_until, end, restart_at)
        _extend(spans, kept)


def _window(text: str, position: int, size: int, long_run: re.Pattern[str]) -> tuple[int, int]:
    """The window's end and the last chunk start it settles."""
    end = min(len(text), position + WINDOW_CHUNKS * size)
    run = long_run.search(text[position:end])
    if run is not None:
        run_start = position + run.start()
        cut = run_start + size + _RUN_LOOKAHEAD
        if cut < end:
            return cut, run_start
    return end, end - 2 * size


def _settled(
    pieces: list[Span], keep_until: int, end: int, restart_at: Callable[[int], bool] | None
) -> tuple[list[Span], int]:
    """The chunks to keep and where the next window starts (always after the current position)."""
    count = 0
    while count < len(pieces) and pieces[count][0] <= keep_until:
        count += 1
    if restart_at is not None:
        for index in range(count - 1, 0, -1):
            if restart_at(pieces[index][0]):
                return pieces[:index], pieces[index][0]
    if count < len(pieces):
        return pieces[:count], pieces[count][0]
    if pieces:  # only whitespace follows the last chunk in this window
        start, piece = pieces[-1]
        return pieces, start + len(piece)
    return [], end


def _extend(spans: list[Span], pieces: list[Span]) -> None:
    # The splitter drops a chunk that ends where an emitted one already ended; a restart forgets
    # what was emitted, so the rule is applied again across windows.
    for start, piece in pieces:
        if spans and start + len(piece) <= spans[-1][0] + len(spans[-1][1]):
            continue
        spans.append((start, piece))
