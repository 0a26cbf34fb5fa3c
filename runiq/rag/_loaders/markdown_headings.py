"""The headings of a Markdown text, found in one pass over its lines.

Why not a CommonMark parser: the loader needs only the headings, and markdown-it-py took 272 s on
8 MiB of ``[`` (its inline parser is quadratic there) and over a minute on some block structures, so
it could only run isolated in a forked worker, at about 4 ms a file. This scan is linear in the text
and runs in a thread. It follows CommonMark where headings are concerned: ATX headings (``## Title``,
up to three spaces of indent, an optional closing ``#`` run) and setext headings (a paragraph
underlined with ``=`` or ``-``), none inside a fenced or indented code block or an HTML comment. It
does not track lists, quotes or other HTML blocks: a list item, quote or HTML line ends a paragraph,
so a setext underline below one is not taken for a heading.
"""

from __future__ import annotations

import re

from runiq.rag._loaders.base import Heading
from runiq.rag._loaders.builder import one_line

__all__ = ["markdown_headings"]

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n|$)")
_ATX_OPENING = re.compile(r"(#{1,6})(?:[ \t]|$)")
_SETEXT = re.compile(r"(=+|-+)[ \t]*")
_FENCE = re.compile(r"(`{3,}|~{3,})")
# A line starting with one of these is a list item, quote, table row or HTML, not a paragraph that a
# setext underline could turn into a heading.
_NOT_PARAGRAPH = re.compile(r"[-+*>|<]|\d{1,9}[.)]")
_COMMENT = "<!--"  # an HTML comment block is skipped like a fence, to the line that closes it


def markdown_headings(text: str) -> tuple[Heading, ...]:
    """Every heading in order; ``start`` is where its line (or, for setext, its paragraph) begins."""
    scan = _Scan(text)
    for match in _LINE.finditer(text):
        start = match.start()
        if start == len(text) and start > 0:
            break  # the empty match after a final line break
        scan.line(start, match.group().rstrip("\r\n"))
    return tuple(scan.headings)


class _Scan:
    """The state between lines: an open fence or comment, and where the open paragraph starts."""

    def __init__(self, text: str) -> None:
        self._text = text
        self.headings: list[Heading] = []
        self._fence: str | None = None
        self._paragraph: int | None = None

    def line(self, start: int, line: str) -> None:
        body = line.lstrip(" ")
        indent = len(line) - len(body)
        if self._fence is not None:
            if (indent <= 3 or self._fence is _COMMENT) and _closes(body, self._fence):
                self._fence = None
        elif not body.strip(" \t"):
            self._paragraph = None
        elif indent <= 3 and not (self._fence_opened(body) or self._atx(start, body) or self._setext(start, body)):
            self._text_line(start, body)
        # More indent: indented code, or a paragraph's continuation; neither changes anything here.

    def _fence_opened(self, body: str) -> bool:
        opening = _FENCE.match(body)
        if opening is None or (opening.group()[0] == "`" and "`" in body[opening.end() :]):
            return False
        self._fence, self._paragraph = opening.group(), None
        return True

    def _atx(self, start: int, body: str) -> bool:
        opening = _ATX_OPENING.match(body)
        if opening is None:
            return False
        title = _atx_title(body[opening.end() :])
        if title:
            self.headings.append(Heading(len(opening.group(1)), title, start))
        self._paragraph = None
        return True

    def _setext(self, start: int, body: str) -> bool:
        if self._paragraph is None or not _SETEXT.fullmatch(body):
            return False
        title = one_line(self._text[self._paragraph : start])
        if title:
            self.headings.append(Heading(1 if body[0] == "=" else 2, title, self._paragraph))
        self._paragraph = None
        return True

    def _text_line(self, start: int, body: str) -> None:
        if _NOT_PARAGRAPH.match(body):
            self._paragraph = None  # a list item, quote or HTML line ends a paragraph (or starts none)
            if body.startswith("<!--") and "-->" not in body[4:]:
                self._fence = _COMMENT
        elif self._paragraph is None:
            self._paragraph = start


def _atx_title(rest: str) -> str:
    """The heading text after the opening ``#`` run: a closing run counts only after a space or tab."""
    content = rest.strip(" \t")
    without_closing = content.rstrip("#")
    if not without_closing:
        return ""
    if without_closing != content and without_closing[-1] in " \t":
        content = without_closing
    return one_line(content)


def _closes(body: str, fence: str) -> bool:
    if fence is _COMMENT:
        return "-->" in body
    marker = fence[0]
    rest = body.lstrip(marker)
    return len(body) - len(rest) >= len(fence) and not rest.strip(" \t")
