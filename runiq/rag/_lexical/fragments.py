"""Identifier fragments: a query that is one partial identifier also finds the identifiers holding it.

Tokens find an identifier whole (``CS1503``) and by its parts (``POL-HR-014`` by ``hr``), but not by
a piece of one: ``S150`` is neither a word nor a part of ``CS1503``. So a query that is one
**fragment** also matches every chunk with a word that contains it, after the BM25 results. The rule,
the same in every store:

* A *word* is what the analyzer calls one (:meth:`~runiq.rag._lexical.tokenizer.Analyzer.words`:
  NFKC-normalised, punctuation around it removed), case-folded.
* A word is *identifier-like* when it holds a decimal digit or one of ``- . _ : / # @ +``
  (``cs1503``, ``s1503-a``, ``filename.cs``, ``snake_case``). Plain words and camelCase words do
  not (``IRagRetriever`` is found whole and by its parts ``rag`` and ``retriever``).
* A query's *fragment* is its free text when that is exactly one identifier-like word of 3 to 200
  characters and the query has no phrase. It matches a chunk when the fragment is a substring of one
  of the chunk's words (such a word is identifier-like too: it holds the fragment's digit or mark).
* Chunks the BM25 ranking already returned are not repeated; the others follow it in
  ``(document_id, chunk_id)`` order with a score of 0.0, up to ``top_k`` results in all.

Why stores can do this cheaply: a fragment holds a digit or a mark, so every index term that
contains it is either an identifier-like word itself (stemming and stop words only touch alphabetic
words, so such a word's term is the word) or a run of digits inside one. The rows holding the index
terms that contain the fragment are therefore exactly the matching rows: an in-memory index scans its
vocabulary, PostgreSQL keeps each chunk's identifier-like words (:func:`identifier_words`) in a
column with a trigram index and asks ``LIKE '%fragment%'``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = [
    "IDENTIFIER_MARKS",
    "MAX_FRAGMENT_CHARACTERS",
    "MIN_FRAGMENT_CHARACTERS",
    "identifier_words",
    "is_identifier_like",
    "query_fragment",
]

IDENTIFIER_MARKS = "-._:/#@+"
MIN_FRAGMENT_CHARACTERS = 3
MAX_FRAGMENT_CHARACTERS = 200
_IDENTIFIER_CHARACTER = re.compile(r"[\d\-._:/#@+]")  # \d: any Unicode decimal digit, as str.isdecimal


def is_identifier_like(word: str) -> bool:
    """Whether a word holds a decimal digit or one of ``- . _ : / # @ +``."""
    return _IDENTIFIER_CHARACTER.search(word) is not None


def query_fragment(words: list[str], *, has_phrases: bool) -> str | None:
    """The fragment of a query whose free text has ``words`` (as the analyzer splits them), or None."""
    if has_phrases or len(words) != 1:
        return None
    fragment = words[0].casefold()
    if not MIN_FRAGMENT_CHARACTERS <= len(fragment) <= MAX_FRAGMENT_CHARACTERS:
        return None
    return fragment if is_identifier_like(fragment) else None


def identifier_words(words: Iterable[str]) -> list[str]:
    """The distinct identifier-like words among ``words``, case-folded and sorted: what a fragment is
    matched against."""
    return sorted({word.casefold() for word in words if _IDENTIFIER_CHARACTER.search(word) is not None})
