"""Identifier-safe tokenisation shared by the in-memory BM25 index and the hashing embedder.

A word like ``POL-HR-014`` or ``IRagRetriever`` is kept whole (``pol-hr-014``, ``iragretriever``) and
also split into its parts (``pol``, ``hr``, ``014``; ``rag``, ``retriever``; one-letter parts are
not indexed), so a query for the
whole identifier ranks exact matches first while a query for one part still finds it. Plain words
produce a single token. Everything is NFKC-normalised and case-folded; stop words and stemming are
:class:`Analyzer` options.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

__all__ = ["Analysis", "Analyzer", "IndexedText", "primary_tokens", "tokenize"]

# A "word": word characters joined by connector punctuation that identifiers use inside themselves.
_WORD = re.compile(r"\w+(?:[-.:/@+#'\u2019]\w+)*")
# Parts: runs of letters or digits, with camelCase boundaries (``IRagRetriever`` -> I, Rag, Retriever).
_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")


def _normalise(text: str) -> str:
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def _raw_words(text: str) -> list[str]:
    """``_WORD.findall(text)``, two to three times faster on prose.

    A word never spans whitespace, so the text is split first; a piece made only of letters and
    digits (``str.isalnum``: exactly ``\\w`` without the underscore) is one word as it stands, and only
    pieces with punctuation or underscores go through the regex.
    """
    words: list[str] = []
    append, extend, findall = words.append, words.extend, _WORD.findall
    for piece in text.split():
        if piece.isalnum():
            append(piece)
        else:
            extend(findall(piece))
    return words


def _parts(word: str) -> list[str]:
    return [part.casefold() for part in _PART.findall(word)]


def primary_tokens(text: str) -> list[str]:
    """Whole words only, in order: the stream that exact-phrase matching compares."""
    return [word.casefold() for word in _raw_words(_normalise(text))]


def _word_tokens(word: str) -> list[tuple[str, bool]]:
    """``(token, is_whole_word)`` for one matched word: the word itself, then its identifier parts."""
    whole = word.casefold()
    tokens = [(whole, True)]
    if word.isdigit() or (word.isalpha() and (word[1:].islower() or word.isupper() or not word[1:])):
        return tokens  # a plain word ("policy", "Policy", "HTML") or number has no parts
    parts = _parts(word)
    if len(parts) > 1 or (parts and parts[0] != whole):
        # One-letter parts ("s" of "library's", "i" of "IRagRetriever") are noise for BM25; whole words stay.
        tokens.extend((part, False) for part in parts if part != whole and len(part) > 1)
    return tokens


def tokenize(text: str) -> list[str]:
    """Whole words plus their identifier parts, in order of appearance."""
    return [token for word in _raw_words(_normalise(text)) for token, _ in _word_tokens(word)]


@dataclass(frozen=True, slots=True)
class Analysis:
    """Index terms of one text and its BM25 length.

    The length counts word positions, not terms: identifier parts sit at their word's position (like
    Lucene's ``discountOverlaps``), so ``POL-HR-014`` is one word long, not four, and prose with
    hyphenated words is not penalised as longer than it is.
    """

    terms: list[str]
    length: int


@dataclass(frozen=True, slots=True)
class IndexedText:
    """What a store writes for one chunk: see :meth:`Analyzer.indexed`."""

    counts: dict[str, int]
    positions: dict[str, list[int]]
    length: int


_Entry = tuple[tuple[str, bool, bool], ...]  # (term, is_whole_word, is_stop_word) for one word
_WORD_CACHE_SIZE = 1 << 15


@dataclass(frozen=True, slots=True)
class Analyzer:
    """Tokeniser plus optional filters: a stop word set and a stemmer.

    Filters apply to plain alphabetic tokens only, so identifiers such as ``CS1503`` or
    ``filename.cs`` are never stemmed or dropped. Stop words stay in the index (unstemmed) but do not
    count towards a chunk's length, and queries drop them unless the query has nothing else: ranking
    is that of a stop-word-free index, while ``to be or not to be`` or ``The Who`` still match.

    Word frequencies follow Zipf's law, so each distinct word is analysed once and its terms are
    remembered (a bounded cache, emptied when full): bulk ingestion spends its time on dictionary
    look-ups, not on case folding, identifier splitting and stemming.
    """

    stopwords: frozenset[str] = frozenset()
    stemmer: Callable[[str], str] | None = None
    _cache: dict[str, _Entry] = field(default_factory=dict, compare=False, hash=False, repr=False)

    def term(self, token: str) -> str:
        """One tokenised word as the index stores it: stemmed when it is a plain, non-stop word."""
        if self.stemmer is not None and token.isalpha() and token not in self.stopwords:
            return self.stemmer(token)
        return token

    def _analyse_word(self, word: str) -> _Entry:
        """The terms of one word (a cache miss of :meth:`word_terms`), remembered for next time."""
        entry: list[tuple[str, bool, bool]] = []
        for token, whole in _word_tokens(word):
            stop = token in self.stopwords and token.isalpha()
            entry.append((token if stop else self.term(token), whole, stop))
        cache = self._cache
        if len(cache) >= _WORD_CACHE_SIZE:
            cache.clear()
        cache[word] = result = tuple(entry)
        return result

    def words(self, text: str) -> list[str]:
        """The raw words of ``text`` in order (NFKC-normalised, not case-folded): what :meth:`word_terms` takes."""
        return _raw_words(_normalise(text))

    def word_terms(self, word: str) -> _Entry:
        """``(term, is_whole_word, is_stop_word)`` for one raw word's terms, whole word first (stop words
        kept, unstemmed). Stores that write their own index format (the PostgreSQL ``tsvector``) group a
        text's words first and ask once per distinct word.
        """
        entry = self._cache.get(word)
        return entry if entry is not None else self._analyse_word(word)

    def _entries(self, text: str) -> Iterator[_Entry]:
        """Per word of ``text``, in order: its terms (whole word first), stop words kept, unstemmed."""
        cache = self._cache
        for word in self.words(text):
            entry = cache.get(word)
            yield entry if entry is not None else self._analyse_word(word)

    def terms(self, text: str) -> list[str]:
        """Index terms of a document text (stop words included)."""
        return self.analyse(text).terms

    def analyse(self, text: str) -> Analysis:
        terms: list[str] = []
        words = 0
        for entry in self._entries(text):
            terms.extend(term for term, _, _ in entry)
            words += not entry[0][2]
        return Analysis(terms=terms, length=max(words, 1) if terms else 0)

    def indexed(self, text: str) -> IndexedText:
        """Term frequencies, whole-word positions (1-based, every word counts) and the BM25 length."""
        counts: dict[str, int] = {}
        positions: dict[str, list[int]] = {}
        words = 0
        for position, entry in enumerate(self._entries(text), 1):
            term, _, stop = entry[0]
            words += not stop
            counts[term] = counts.get(term, 0) + 1
            at = positions.get(term)
            if at is None:
                positions[term] = [position]
            else:
                at.append(position)
            for part, _, _ in entry[1:]:
                counts[part] = counts.get(part, 0) + 1
        return IndexedText(counts=counts, positions=positions, length=max(words, 1) if counts else 0)

    def whole_terms(self, text: str) -> list[str]:
        """The term of each word of ``text``, in order (stop words kept, unstemmed): one per word position,
        identifier parts left out. Phrases are matched on this sequence."""
        return [entry[0][0] for entry in self._entries(text)]

    def query_terms(self, text: str) -> list[str]:
        """Query terms: stop words dropped, unless the query consists of nothing else."""
        content: list[str] = []
        stopped: list[str] = []
        for entry in self._entries(text):
            for term, _, stop in entry:
                (stopped if stop else content).append(term)
        return content or stopped
