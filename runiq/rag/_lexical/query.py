"""Query syntax: text inside balanced double quotes is an exact phrase; the rest are free terms.

Parsing never fails on user text. An unbalanced quote is treated as ordinary punctuation, control
characters are whitespace, and only the first ``MAX_QUERY_TERMS`` terms are used so a pasted
document cannot turn one query into thousands of posting-list walks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from runiq.rag._lexical.tokenizer import primary_tokens

__all__ = ["MAX_QUERY_TERMS", "LexicalQuery", "contains_phrase", "parse_lexical_query"]

MAX_QUERY_TERMS = 256
_QUOTES = re.compile(r'"([^"]*)"')
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class LexicalQuery:
    """A parsed lexical query: the full text (for scoring), the free part, and exact phrases."""

    text: str
    free_text: str
    phrases: tuple[str, ...]

    @property
    def is_empty(self) -> bool:
        return not primary_tokens(self.text)

    @property
    def phrase_tokens(self) -> tuple[tuple[str, ...], ...]:
        return tuple(tuple(primary_tokens(p)) for p in self.phrases if primary_tokens(p))


def parse_lexical_query(text: str) -> LexicalQuery:
    cleaned = _CONTROL.sub(" ", text).strip()
    phrases = tuple(p.strip() for p in _QUOTES.findall(cleaned) if p.strip())
    free = _QUOTES.sub(" ", cleaned).replace('"', " ")
    scoring_text = " ".join([*phrases, free]).strip()
    return LexicalQuery(text=scoring_text, free_text=free.strip(), phrases=phrases)


def contains_phrase(terms: list[str], phrase: tuple[str, ...]) -> bool:
    """True when ``phrase`` occurs as a contiguous run in ``terms``: a phrase's analysed terms in a
    text's :meth:`~runiq.rag._lexical.tokenizer.Analyzer.whole_terms` (see :mod:`runiq.rag._lexical.analysed`)."""
    width = len(phrase)
    if width == 0:
        return True
    first = phrase[0]
    return any(terms[i] == first and tuple(terms[i : i + width]) == phrase for i in range(len(terms) - width + 1))
