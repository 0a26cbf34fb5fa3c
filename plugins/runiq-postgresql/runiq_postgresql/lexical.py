"""Lexical terms for PostgreSQL, produced by runiq's own analyzer so every store tokenises alike.

Each chunk gets a ``tsvector`` built here, sent in the binary wire format (never through a text-search
configuration):

* each word's term (:meth:`~runiq.rag._lexical.tokenizer.Analyzer.whole_terms`: ``pol-hr-014``,
  ``filename.cs``, stemmed plain words) takes the word's position 1, 2, 3, ... with weight ``B``, so
  an exact phrase is the tsquery ``'a':B <-> 'b':B`` over whole-word terms only, the phrase semantics
  of :mod:`runiq.rag._lexical.analysed`;
* identifier parts (``pol``, ``hr``, ``014``; ``rag``, ``retriever``) get weight ``D`` positions
  (the lowest free ones): they carry the part's frequency and are searchable, but never satisfy a
  phrase, which only looks at ``B`` positions.

A lexeme's number of positions is its term frequency, and ``term_count`` is the analyzer's BM25
length (whole words that are not stop words; identifier parts share their word's position), exactly
as the in-memory BM25 index counts them. This is the ``simple`` idea with identifier-aware tokens;
the text tokenised is the chunk's indexed text (:func:`~runiq.rag._chunking.context.indexed_text`);
stop words stay in the ``tsvector`` (so phrases and stop-word-only queries work) but queries drop
them, and the optional stemmer rewrites plain words before they are written.

PostgreSQL limits: lexemes over 2,047 bytes are skipped (they are still found by the trigram
substring path), positions above 16,383 are clamped and a lexeme keeps at most 256 positions, so
phrases and frequencies are exact for chunks up to about 16k words (default chunks are 1,000
characters).
"""

from __future__ import annotations

import struct
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain

import numpy as np
import numpy.typing as npt

from runiq.rag.providers import DEFAULT_ANALYZER, AnalysedQuery, Analyzer, identifier_words

__all__ = [
    "ChunkTerms",
    "QueryTerms",
    "SlicePostings",
    "SliceTerms",
    "chunk_terms",
    "identifier_text",
    "or_query",
    "query_terms",
    "slice_terms",
    "substring_pattern",
    "tsvector_literal",
]

MAX_LEXEME_BYTES = 2046
MAX_POSITION = 16383
MAX_POSITIONS_PER_LEXEME = 256
_MAX_TSVECTOR_BYTES = 900_000  # PostgreSQL refuses tsvectors over 1 MB


def quote_lexeme(term: str) -> str:
    """A tsvector/tsquery literal for one lexeme: single quotes doubled, backslashes escaped."""
    if "'" in term or "\\" in term:
        term = term.replace("\\", "\\\\").replace("'", "''")
    return "'" + term + "'"


def _indexable(term: str) -> bool:
    return 0 < len(term.encode("utf-8")) <= MAX_LEXEME_BYTES


@dataclass(frozen=True, slots=True)
class ChunkTerms:
    """``tsvector`` in PostgreSQL's binary wire format, BM25 length, and the distinct lexemes.

    The binary form is what COPY sends (the pool registers a pass-through binary
    codec for ``tsvector``): the server copies it in without parsing a literal, which is about half
    the server time of a bulk load. :func:`tsvector_literal` renders it as PostgreSQL prints it.
    ``frequencies[i]`` is the number of positions ``lexemes[i]`` has in the ``tsvector``: its term
    frequency, as BM25 scoring counts it.
    """

    tsvector: bytes
    term_count: int
    lexemes: tuple[str, ...]
    identifiers: str
    frequencies: tuple[int, ...]


@dataclass(frozen=True, slots=True, eq=False)
class SlicePostings:
    """A run of chunks' postings grouped by lexeme: what the postings table stores (see ``postings``).

    Lexeme ``terms[i]`` occurs in the chunks ``chunks[starts[i]:starts[i + 1]]`` (indexes into the
    run, increasing) with the term frequencies ``tfs[starts[i]:starts[i + 1]]``.
    """

    terms: list[str]
    starts: npt.NDArray[np.int64]
    chunks: npt.NDArray[np.int32]
    tfs: npt.NDArray[np.uint16]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SlicePostings):
            return NotImplemented
        return (
            self.terms == other.terms
            and np.array_equal(self.starts, other.starts)
            and np.array_equal(self.chunks, other.chunks)
            and np.array_equal(self.tfs, other.tfs)
        )

    __hash__ = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class SliceTerms:
    """The lexical columns of a run of chunks, the run's document frequencies for the BM25 statistics,
    and its postings.

    What a write needs from tokenising: per chunk the ``tsvector`` and BM25 length, per lexeme the
    number of chunks holding it, and the (lexeme, chunk, tf) postings as numpy arrays grouped by
    lexeme. The helper process answers with this rather than one :class:`ChunkTerms` per chunk.
    """

    tsvectors: list[bytes]
    term_counts: list[int]
    frequencies: Counter[str]
    identifiers: list[str]
    postings: SlicePostings


def slice_terms(contents: Iterable[str], analyzer: Analyzer = DEFAULT_ANALYZER) -> SliceTerms:
    tsvectors: list[bytes] = []
    term_counts: list[int] = []
    lexemes: list[tuple[str, ...]] = []
    tfs: list[tuple[int, ...]] = []
    identifiers: list[str] = []
    for content in contents:
        terms = chunk_terms(content, analyzer)
        tsvectors.append(terms.tsvector)
        term_counts.append(terms.term_count)
        lexemes.append(terms.lexemes)
        tfs.append(terms.frequencies)
        identifiers.append(terms.identifiers)
    # Counter over an iterable counts in C; each chunk's lexemes are distinct, so this is the df.
    frequencies = Counter(chain.from_iterable(lexemes))
    return SliceTerms(tsvectors, term_counts, frequencies, identifiers, _postings(lexemes, tfs, frequencies))


def _postings(lexemes: list[tuple[str, ...]], tfs: list[tuple[int, ...]], df: Counter[str]) -> SlicePostings:
    """Group the chunks' (lexeme, tf) pairs by lexeme, in the order of ``df``'s keys, chunks ascending."""
    number = {term: i for i, term in enumerate(df)}
    total = sum(df.values())
    ids = np.fromiter(map(number.__getitem__, chain.from_iterable(lexemes)), dtype=np.int64, count=total)
    order = np.argsort(ids, kind="stable")  # stable: each lexeme's chunks stay in chunk order
    chunk_of = np.repeat(np.arange(len(lexemes), dtype=np.int32), [len(terms) for terms in lexemes])
    frequencies = np.fromiter(chain.from_iterable(tfs), dtype=np.uint16, count=total)
    starts = np.zeros(len(number) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(df.values(), dtype=np.int64, count=len(number)), out=starts[1:])
    return SlicePostings(terms=list(number), starts=starts, chunks=chunk_of[order], tfs=frequencies[order])


# Wire format (tsvectorrecv): int32 lexeme count, then per lexeme its UTF-8 bytes, NUL, uint16
# position count and uint16 positions in increasing order, each with the weight in its top two bits.
_WEIGHT_B = 2 << 14
_COUNT = struct.Struct(">i")
_NPOS = tuple(struct.pack(">H", n) for n in range(MAX_POSITIONS_PER_LEXEME + 1))
# Bulk loads encode millions of positions: the common ones are encoded once.
_WHOLE_AT = tuple(struct.pack(">H", _WEIGHT_B | p) for p in range(MAX_POSITION + 1))
_ONE_WHOLE_AT = tuple(_NPOS[1] + _WHOLE_AT[p] for p in range(1024))
_PART_RUNS = tuple(_NPOS[n] + struct.pack(f">{n}H", *range(1, n + 1)) for n in range(MAX_POSITIONS_PER_LEXEME + 1))
# Below this many characters no chunk can approach the tsvector size limit (a few dozen bytes per character at most).
_UNCHECKED_CHARS = 20_000


def chunk_terms(content: str, analyzer: Analyzer = DEFAULT_ANALYZER) -> ChunkTerms:
    """The hot loop of bulk ingestion: positions are grouped per raw word, each distinct word analysed once."""
    wholes, parts, length = _grouped_terms(content, analyzer)
    entries, lexemes, counts = _binary_entries(wholes, parts)
    if len(content) > _UNCHECKED_CHARS:
        kept = _within_size_limit(entries)
        entries, lexemes, counts = entries[:kept], lexemes[:kept], counts[:kept]
    return ChunkTerms(
        tsvector=_COUNT.pack(len(entries)) + b"".join(entries),
        term_count=length,
        lexemes=tuple(lexemes),
        identifiers=identifier_text(wholes),  # an identifier-like word's term is the word, case-folded
        frequencies=tuple(counts),
    )


def _grouped_terms(content: str, analyzer: Analyzer) -> tuple[dict[str, list[int]], dict[str, int], int]:
    """Whole-word positions per term, identifier-part counts per term, and the BM25 length."""
    raw = analyzer.words(content)
    at_word: dict[str, list[int]] = {}
    for position, word in enumerate(raw, 1):
        at = at_word.get(word)
        if at is None:
            at_word[word] = [position]
        else:
            at.append(position)
    wholes: dict[str, list[int]] = {}
    parts: dict[str, int] = {}
    stops = 0
    word_terms = analyzer.word_terms
    for word, at in at_word.items():
        entry = word_terms(word)
        term, _, stop = entry[0]
        if stop:
            stops += len(at)
        known = wholes.get(term)
        # Different spellings of one term ("Policy", "policy") merge, in position order.
        wholes[term] = at if known is None else sorted(known + at)
        if len(entry) > 1:
            for part, _, _ in entry[1:]:
                parts[part] = parts.get(part, 0) + len(at)
    return wholes, parts, max(len(raw) - stops, 1) if raw else 0


def _binary_entries(wholes: dict[str, list[int]], parts: dict[str, int]) -> tuple[list[bytes], list[str], list[int]]:
    """One wire-format entry per lexeme (whole words weighted B, parts unweighted), the lexemes and their
    position counts, alike ordered.

    Lexemes stay in first-occurrence order: the server sorts them (they are distinct, which it
    requires of binary input).
    """
    entries: list[bytes] = []
    lexemes: list[str] = []
    counts: list[int] = []
    for term, at in wholes.items():
        extra = parts.pop(term, 0) if parts else 0
        if len(term) > 500 and not _indexable(term):  # 500 characters are at most 2,000 bytes
            continue
        prefix = _prefixes.get(term) or _prefix(term)
        if len(at) == 1 and not extra and at[0] < 1024:
            entries.append(prefix + _ONE_WHOLE_AT[at[0]])
            counts.append(1)
        elif extra or at[-1] > MAX_POSITION or len(at) > MAX_POSITIONS_PER_LEXEME:
            positions = _mixed_positions(at, extra)
            entries.append(prefix + positions)
            counts.append(int.from_bytes(positions[:2], "big"))
        else:
            entries.append(prefix + _NPOS[len(at)] + b"".join([_WHOLE_AT[p] for p in at]))
            counts.append(len(at))
        lexemes.append(term)
    for term, count in parts.items():
        if len(term) > 500 and not _indexable(term):
            continue
        count = min(count, MAX_POSITIONS_PER_LEXEME)
        entries.append((_prefixes.get(term) or _prefix(term)) + _PART_RUNS[count])
        lexemes.append(term)
        counts.append(count)
    return entries, lexemes, counts


_prefixes: dict[str, bytes] = {}  # term -> its UTF-8 bytes and NUL, bounded like the analyzer's word cache
_PREFIX_CACHE_SIZE = 1 << 15


def _prefix(term: str) -> bytes:
    if len(_prefixes) >= _PREFIX_CACHE_SIZE:
        _prefixes.clear()
    _prefixes[term] = prefix = term.encode("utf-8") + b"\x00"
    return prefix


def _mixed_positions(whole: list[int], extra: int) -> bytes:
    """A word that also occurs as an identifier part, or has positions beyond the precomputed ones."""
    count = len(whole) + extra
    if whole[-1] > MAX_POSITION or len(whole) > MAX_POSITIONS_PER_LEXEME:
        whole = sorted({min(p, MAX_POSITION) for p in whole})[:MAX_POSITIONS_PER_LEXEME]
    # Occurrences clamped away still count: they become unweighted positions, so the frequency holds.
    extra = min(count - len(whole), MAX_POSITIONS_PER_LEXEME - len(whole))
    positions = [_WEIGHT_B | p for p in whole]
    if extra > 0:
        positions += _part_positions(whole, extra)
        positions.sort(key=_position_of)
    return _NPOS[len(positions)] + struct.pack(f">{len(positions)}H", *positions)


def _position_of(entry: int) -> int:
    return entry & MAX_POSITION


def _within_size_limit(entries: list[bytes]) -> int:
    """How many leading lexemes of a huge chunk keep its tsvector under PostgreSQL's 1 MB limit."""
    size = 0
    for i, entry in enumerate(entries):
        size += len(entry) + 5  # the server adds a 4-byte entry header and up to one alignment byte
        if size > _MAX_TSVECTOR_BYTES:
            return i
    return len(entries)


def _part_positions(taken: list[int], count: int) -> list[int]:
    """Positions for identifier-part occurrences: they carry the frequency, never a phrase position."""
    if not taken:
        return list(range(1, min(count, MAX_POSITION) + 1))
    used = set(taken)
    free: list[int] = []
    candidate = 1
    while len(free) < count and candidate <= MAX_POSITION:
        if candidate not in used:
            free.append(candidate)
        candidate += 1
    return free


_WEIGHT_LETTERS = ("", "C", "B", "A")  # D (0) prints without a letter


def tsvector_literal(binary: bytes) -> str:
    """PostgreSQL's text form of a wire-format tsvector (lexemes in its sort order), for tests and debugging."""
    (count,) = _COUNT.unpack_from(binary)
    offset = _COUNT.size
    entries: list[tuple[bytes, str]] = []
    for _ in range(count):
        end = binary.index(b"\x00", offset)
        lexeme = binary[offset:end]
        (npos,) = struct.unpack_from(">H", binary, end + 1)
        positions = struct.unpack_from(f">{npos}H", binary, end + 3)
        offset = end + 3 + 2 * npos
        text = ",".join(f"{p & MAX_POSITION}{_WEIGHT_LETTERS[p >> 14]}" for p in positions)
        entries.append((lexeme, quote_lexeme(lexeme.decode("utf-8")) + (":" + text if text else "")))
    # tsCompareString: bytewise, a prefix before the longer string.
    return " ".join(literal for _, literal in sorted(entries))


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """What a search sends to the server for an analysed query: the terms PostgreSQL can hold (in
    query order) with their query frequencies, the candidate tsquery, and the fragment's pattern."""

    terms: tuple[str, ...]
    frequencies: tuple[int, ...]
    match: str  # tsquery literal selecting candidates ('' when nothing can match)
    has_phrases: bool
    substring: str | None  # LIKE pattern for the identifier fragment, or None


def query_terms(query: AnalysedQuery) -> QueryTerms:
    """The server's side of an :class:`~runiq.rag._lexical.analysed.AnalysedQuery`.

    A phrase is ``'a':B <-> 'b':B`` over whole-word positions (weight B): the analysed terms at
    consecutive word positions, as the query's phrase semantics say. Lexemes PostgreSQL cannot hold
    (over 2,046 bytes) are left out: no chunk has them in its ``tsvector``.
    """
    kept = [(term, qtf) for term, qtf in zip(query.terms, query.weights, strict=True) if _indexable(term)]
    terms = tuple(term for term, _ in kept)
    phrases = [tuple(w for w in phrase if _indexable(w)) for phrase in query.phrases]
    phrases = [p for p in phrases if p]
    if phrases:
        match = " & ".join("(" + " <-> ".join(f"{quote_lexeme(w)}:B" for w in phrase) + ")" for phrase in phrases)
    else:
        match = or_query(terms)
    return QueryTerms(
        terms=terms,
        frequencies=tuple(qtf for _, qtf in kept),
        match=match,
        has_phrases=bool(phrases),
        substring=None if query.fragment is None else substring_pattern(query.fragment),
    )


def or_query(terms: Iterable[str]) -> str:
    """The candidate tsquery of free text: chunks holding any of the terms."""
    return " | ".join(quote_lexeme(t) for t in terms)


def identifier_text(words: Iterable[str]) -> str:
    """A chunk's identifier-like words (:func:`~runiq.rag._lexical.fragments.identifier_words`),
    space-separated: the column an identifier fragment is matched against with ``LIKE``.

    This column, not the whole content, is what the trigram index covers: it is a few percent of
    prose, so the index builds in a fraction of the time and stays small. A fragment holds no space,
    so it never matches across two words. Rows written before schema version 4 have no identifiers
    and are matched on their content.
    """
    return " ".join(identifier_words(words))


def substring_pattern(fragment: str) -> str:
    """The ``LIKE`` pattern finding ``fragment`` (already case-folded) inside the identifier column."""
    escaped = fragment.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"
