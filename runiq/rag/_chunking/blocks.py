"""Where a Markdown document may be re-parsed from the middle without changing its structure.

The Markdown splitter parses its whole input. When chunking restarts part-way through a document
(see :mod:`runiq.rag._chunking.windows`), a restart inside a list, a quote or a fenced code block
would parse the rest differently (a closing fence would open a new block). A restart is safe at the
start of a top-level paragraph or heading: the line follows a blank line, starts in column 0 with
no list, quote, table, HTML, fence or indentation marker, and lies outside every fenced code block.
(HTML blocks that may hold blank lines, such as ``<pre>`` or comments, are not tracked: a restart
inside one only parses the rest of that window differently.)
"""

from __future__ import annotations

import bisect
import re

__all__ = ["MarkdownRestarts"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.MULTILINE)
_NOT_A_PARAGRAPH = frozenset(" \t\r\n>|<*+-0123456789`~")
_BLANK_LINE_LIMIT = 64  # a longer line of spaces is not taken for a blank line


class MarkdownRestarts:
    """``restarts(offset)``: does a top-level paragraph or heading start at ``offset``?

    Fenced blocks are found once (one scan); each question then looks only at the two lines around
    ``offset``, so asking about a few chunk starts per window stays cheap on any document.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._fences = _fenced_blocks(text)
        self._fence_starts = [start for start, _ in self._fences]

    def __call__(self, offset: int) -> bool:
        text = self._text
        if not 0 < offset < len(text) or text[offset - 1] != "\n" or text[offset] in _NOT_A_PARAGRAPH:
            return False
        lowest = max(0, offset - 2 - _BLANK_LINE_LIMIT)
        previous = text.rfind("\n", lowest, offset - 1)
        if previous < 0 and lowest > 0:
            return False
        if text[previous + 1 : offset - 1].strip(" \t"):
            return False  # the line before is not blank: a continuation of the paragraph before
        at = bisect.bisect_right(self._fence_starts, offset) - 1
        return at < 0 or offset >= self._fences[at][1]


def _fenced_blocks(text: str) -> list[tuple[int, int]]:
    """(start, end) of each fenced code block; an unclosed fence runs to the end of the text."""
    blocks: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    for match in _FENCE.finditer(text):
        marker, rest = match.group(1), match.group(2)
        if opened is None:
            if not (marker[0] == "`" and "`" in rest):  # a backtick fence's info string has no backtick
                opened = (match.start(), marker)
        elif marker[0] == opened[1][0] and len(marker) >= len(opened[1]) and not rest.strip():
            blocks.append((opened[0], match.end()))
            opened = None
    if opened is not None:
        blocks.append((opened[0], len(text)))
    return blocks
