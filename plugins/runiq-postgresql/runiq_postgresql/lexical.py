"""Lexical terms for PostgreSQL, produced by runiq's own analyzer so every store tokenises alike.

Each chunk gets a ``tsvector`` written as a literal (never through a text-search configuration):

* whole words (``primary_tokens``: ``pol-hr-014``, ``filename.cs``) take positions 1, 2, 3, ... with
  weight ``B``, so an exact phrase is the tsquery ``'a':B <-> 'b':B`` over whole words only;
* identifier parts (``pol``, ``hr``, ``014``; ``rag``, ``retriever``) get weight ``D`` positions
  (the lowest free ones): they carry the part's frequency and are searchable, but never satisfy a
  phrase, which only looks at ``B`` positions.

A lexeme's number of positions is its term frequency, and ``term_count`` is the analyzer's BM25
length (whole words that are not stop words; identifier parts share their word's position), exactly
as the in-memory BM25 index counts them. This is the ``simple`` idea with identifier-aware tokens;
stop words stay in the ``tsvector`` (so phrases and stop-word-only queries work) but queries drop
them, and the optional stemmer rewrites plain words before they are written.

PostgreSQL limits: lexemes over 2,047 bytes are skipped (they are still found by the trigram
substring path), positions above 16,383 are clamped and a lexeme keeps at most 256 positions, so
phrases and frequencies are exact for chunks up to about 16k words (default chunks are 1,000
characters).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from runiq.rag.lexical.options import DEFAULT_ANALYZER
from runiq.rag.lexical.query import MAX_QUERY_TERMS, LexicalQuery
from runiq.rag.lexical.tokenizer import Analyzer

__all__ = ["ChunkTerms", "QueryTerms", "chunk_terms", "query_terms", "substring_pattern"]

MAX_LEXEME_BYTES = 2046
MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 256
_MAX_TSVECTOR_BYTES = 900_000  # PostgreSQL refuses tsvectors over 1 MB
_IDENTIFIER_MARKS = frozenset("-._:/#@+")


def quote_lexeme(term: str) -> str:
    """A tsvector/tsquery literal for one lexeme: single quotes doubled, backslashes escaped."""
    if "'" in term or "\\" in term:
        term = term.replace("\\", "\\\\").replace("'", "''")
    return "'" + term + "'"


def _indexable(term: str) -> bool:
    return 0 < len(term.encode("utf-8")) <= MAX_LEXEME_BYTES


@dataclass(frozen=True, slots=True)
class ChunkTerms:
    """``tsvector`` literal, BM25 length, and the distinct lexemes (for document-frequency statistics)."""

    tsvector: str
    term_count: int
    lexemes: frozenset[str]


def chunk_terms(content: str, analyzer: Analyzer = DEFAULT_ANALYZER) -> ChunkTerms:
    indexed = analyzer.indexed(content)
    counts = indexed.counts
    wholes = indexed.positions
    entries: list[str] = []
    lexemes: list[str] = []
    size = 0
    for term in sorted(counts):
        if len(term) > 500 and not _indexable(term):  # 500 characters are at most 2,000 bytes
            continue
        whole = wholes.get(term)
        count = counts[term]
        if whole is None:
            entry = _part_positions([], min(count, MAX_POSITIONS_PER_LEXEME))
        else:
            if whole[-1] > MAX_POSITION or len(whole) > MAX_POSITIONS_PER_LEXEME:
                whole = sorted({min(p, MAX_POSITION) for p in whole})[:MAX_POSITIONS_PER_LEXEME]
            entry = "B,".join(map(str, whole)) + "B"
            extra = min(count - len(whole), MAX_POSITIONS_PER_LEXEME - len(whole))
            if extra > 0:
                entry += "," + _part_positions(whole, extra)
        size += len(term) + 3 * count + 8
        if size > _MAX_TSVECTOR_BYTES:
            break
        entries.append(quote_lexeme(term) + ":" + entry)
        lexemes.append(term)
    return ChunkTerms(tsvector=" ".join(entries), term_count=indexed.length, lexemes=frozenset(lexemes))


def _part_positions(taken: list[int], count: int) -> str:
    """Positions for identifier-part occurrences: they carry the frequency, never a phrase position."""
    if not taken:
        return ",".join(map(str, range(1, min(count, MAX_POSITION) + 1)))
    used = set(taken)
    free: list[str] = []
    candidate = 1
    while len(free) < count and candidate <= MAX_POSITION:
        if candidate not in used:
            free.append(str(candidate))
        candidate += 1
    return ",".join(free)


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What the SQL needs: distinct terms with query frequencies, the candidate tsquery, and phrases."""

    terms: tuple[str, ...]
    frequencies: tuple[int, ...]
    match: str  # tsquery literal selecting candidates ('' when nothing can match)
    has_phrases: bool
    substring: str | None  # LIKE pattern for the identifier safety net, or None


def query_terms(query: LexicalQuery, analyzer: Analyzer = DEFAULT_ANALYZER) -> QueryTerms:
    counts = Counter(t for t in analyzer.query_terms(query.text)[:MAX_QUERY_TERMS] if _indexable(t))
    terms = tuple(sorted(counts))
    phrases = [tuple(analyzer.term(w) for w in phrase) for phrase in query.phrase_tokens]
    phrases = [tuple(w for w in phrase if _indexable(w)) for phrase in phrases]
    phrases = [p for p in phrases if p]
    if phrases:
        match = " & ".join("(" + " <-> ".join(f"{quote_lexeme(w)}:B" for w in phrase) + ")" for phrase in phrases)
    else:
        match = " | ".join(quote_lexeme(t) for t in terms)
    return QueryTerms(
        terms=terms,
        frequencies=tuple(counts[t] for t in terms),
        match=match,
        has_phrases=bool(phrases),
        substring=None if phrases else substring_pattern(query.free_text),
    )


def substring_pattern(text: str) -> str | None:
    """A case-insensitive ``LIKE`` pattern when ``text`` is one identifier-like word (``CS1503``, ``a.cs``).

    Tokens already find identifiers whole and by parts; this catches the rest (a fragment such as
    ``HR-01`` or ``name.c``) through the trigram index. Plain words and sentences never use it.
    """
    word = text.strip()
    if len(word) < 3 or len(word) > 200 or any(ch.isspace() for ch in word):
        return None
    identifier_like = any(ch in _IDENTIFIER_MARKS or ch.isdigit() for ch in word) or (
        any(ch.isupper() for ch in word[1:]) and any(ch.islower() for ch in word)
    )
    if not identifier_like:
        return None
    escaped = word.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
