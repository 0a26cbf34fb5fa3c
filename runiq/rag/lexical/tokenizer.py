"""Identifier-safe tokenisation shared by the in-memory BM25 index and the hashing embedder.

A word like ``POL-HR-014`` or ``IRagRetriever`` is kept whole (``pol-hr-014``, ``iragretriever``) and
also split into its parts (``pol``, ``hr``, ``014``; ``rag``, ``retriever``; one-letter parts are
not indexed), so a query for the
whole identifier ranks exact matches first while a query for one part still finds it. Plain words
produce a single token. Everything is NFKC-normalised and case-folded; no language-specific stemming or
stop words are applied unless an analyzer option asks for them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["Analyzer", "primary_tokens", "tokenize"]

# A "word": word characters joined by connector punctuation that identifiers use inside themselves.
_WORD = re.compile(r"\w+(?:[-.:/@+#'\u2019]\w+)*")
# Parts: runs of letters or digits, with camelCase boundaries (``IRagRetriever`` -> I, Rag, Retriever).
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")


def _normalise(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _parts(word: str) -> list[str]:
    return [part.casefold() for part in _PART.findall(word)]


def primary_tokens(text: str) -> list[str]:
    """Whole words only, in order: the stream that exact-phrase matching compares."""
    return [match.group(0).casefold() for match in _WORD.finditer(_normalise(text))]


def tokenize(text: str) -> list[str]:
    """Whole words plus their identifier parts, in order of appearance."""
    tokens: list[str] = []
    for match in _WORD.finditer(_normalise(text)):
        word = match.group(0)
        whole = word.casefold()
        parts = _parts(word)
        tokens.append(whole)
        if len(parts) > 1 or (parts and parts[0] != whole):
            # One-letter parts ("s" of "library's", "i" of "IRagRetriever") are noise for BM25; whole words stay.
            tokens.extend(part for part in parts if part != whole and len(part) > 1)
    return tokens


@dataclass(frozen=True, slots=True)
class Analyzer:
    """Tokeniser plus optional, off-by-default filters (a stop word set, a stemmer).

    Filters apply to plain alphabetic tokens only, so identifiers such as ``CS1503`` or
    ``filename.cs`` are never stemmed or dropped.
    """

    stopwords: frozenset[str] = frozenset()
    stemmer: Callable[[str], str] | None = None

    def terms(self, text: str) -> list[str]:
        return list(self._filter(tokenize(text)))

    def _filter(self, tokens: Iterable[str]) -> Iterable[str]:
        for token in tokens:
            if token.isalpha():
                if token in self.stopwords:
                    continue
                if self.stemmer is not None:
                    token = self.stemmer(token)
            yield token
