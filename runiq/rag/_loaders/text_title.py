"""A plain-text document's title: its first line, when that line is laid out as a heading.

Plain text has no markup for a title, but people mark one by layout: a short first line standing on its
own, with a blank line (or a Setext/reStructuredText underline of ``=``, ``-`` or ``~``) between it
and the text. :func:`plain_text_title` takes that line when all of these hold, and otherwise gives
``None`` (a document without a title keeps its file name's):

* **It stands apart.** The first non-blank line is followed by a blank line or an underline, and text
  follows. A line that runs on into the next line is the start of a paragraph (hard-wrapped prose, an
  e-mail's headers, a log), not a heading.
* **It reads as a heading, not a sentence.** At most :data:`MAX_TITLE_WORDS` words (unstructured's
  ``is_possible_title`` default) and :data:`MAX_TITLE_CHARACTERS` characters; it does not end in
  ``.``, ``!``, ``,``, ``;`` or ``:`` (a closing quote or bracket after them counts too): a sentence,
  an exclamation, a salutation ("Dear team,") or a lead-in to a list is not a title. A question may
  be one ("Why index titles?").
* **It is words.** It starts with a letter, a digit or an opening quote or bracket (so not a bullet,
  a ``#`` comment, code or a rule of dashes); at least half of its non-space characters are letters
  (unstructured's ratio: dates, numbers, separators and mojibake are not titles); it holds no control
  characters.

Only the first :data:`_HEAD_CHARACTERS` characters are read, so a huge first line or a huge file
costs no more than a short one. Other tools: unstructured classifies every paragraph of a text file
with ``is_possible_title`` (no sentence-end check, so "Call me." is a title there); LlamaIndex's and
Haystack's text readers set no title (LlamaIndex's ``TitleExtractor`` asks an LLM).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["MAX_TITLE_CHARACTERS", "MAX_TITLE_WORDS", "plain_text_title"]

MAX_TITLE_WORDS = 12
MAX_TITLE_CHARACTERS = 200
_HEAD_CHARACTERS = 1024  # the title line, its underline and the start of the text after them
_SENTENCE_ENDS = frozenset(".!,;:")
_QUOTES_AND_INVERTED = frozenset("\"'\u00bf\u00a1")  # straight quotes, Spanish inverted ? and !
_OPENING = frozenset({"Ps", "Pi"})  # Unicode opening brackets and quotes
_CLOSING = frozenset({"Pe", "Pf"})
_UNDERLINE = re.compile(r"={3,}|-{3,}|~{3,}")
_MIN_ALPHA_RATIO = 0.5


def plain_text_title(text: str) -> str | None:
    """The first line of ``text`` when it is laid out and worded as a title (module docstring), else ``None``."""
    lines = text[:_HEAD_CHARACTERS].splitlines()
    index = next((i for i, line in enumerate(lines) if line.strip()), None)
    if index is None or index + 2 >= len(lines):
        return None  # no line, or nothing after it within the head (the head's last line may be cut)
    title = " ".join(lines[index].split())
    if not _stands_apart(lines[index + 1 :]) or not _reads_as_title(title):
        return None
    return title


def _stands_apart(after: list[str]) -> bool:
    """A blank line or an underline (three or more of one of ``= - ~``) follows, then text."""
    separator = after[0].strip()
    if separator and _UNDERLINE.fullmatch(separator) is None:
        return False
    return any(line.strip() for line in after[1:])


def _reads_as_title(title: str) -> bool:
    if not title or len(title) > MAX_TITLE_CHARACTERS or len(title.split()) > MAX_TITLE_WORDS:
        return False
    first = title[0]
    if not (first.isalnum() or first in _QUOTES_AND_INVERTED or unicodedata.category(first) in _OPENING):
        return False
    if _last_but_closers(title) in _SENTENCE_ENDS:
        return False
    if any(unicodedata.category(character).startswith("C") for character in title):
        return False
    visible = title.replace(" ", "")
    return sum(character.isalpha() for character in visible) >= _MIN_ALPHA_RATIO * len(visible)


def _last_but_closers(title: str) -> str:
    """The last character before any closing quotes and brackets ("" when there is none)."""
    end = len(title)
    while end and (title[end - 1] in _QUOTES_AND_INVERTED or unicodedata.category(title[end - 1]) in _CLOSING):
        end -= 1
    return title[end - 1] if end else ""
