"""Pure lexical term building: tsvector literals, tsquery literals and the identifier fragment column."""

from __future__ import annotations

from collections import Counter

from runiq.rag._lexical import DEFAULT_ANALYZER, Analyzer, LexicalOptions, analyse_query, tokenize
from runiq.rag._lexical.fragments import identifier_words
from runiq.rag.providers import parse_lexical_query
from runiq_postgresql.lexical import (
    QueryTerms,
    chunk_terms,
    query_terms,
    quote_lexeme,
    substring_pattern,
    tsvector_literal,
)


def _query(text: str, analyzer: Analyzer = DEFAULT_ANALYZER) -> QueryTerms:
    return query_terms(analyse_query(parse_lexical_query(text), analyzer))


def _entries(binary: bytes) -> dict[str, str]:
    # Test helper for tsvectors without spaces inside lexemes.
    literal = tsvector_literal(binary)
    return dict(entry.rsplit(":", 1) for entry in literal.split(" ")) if literal else {}


def test_whole_words_are_weighted_b_and_parts_are_not() -> None:
    """Whole words get consecutive B positions; identifier parts get unweighted (D) positions."""
    entries = _entries(chunk_terms("Policy POL-HR-014 covers").tsvector)
    assert entries["'policy'"] == "1B"
    assert entries["'pol-hr-014'"] == "2B"
    assert entries["'pol'"] == "1"
    assert entries["'hr'"] == "1"
    assert entries["'014'"] == "1"
    assert entries["'covers'"] == "3B"


def test_term_frequencies_and_length_match_the_analyzer() -> None:
    """Positions per lexeme equal the analyzer's term frequency, even when a part repeats a later word."""
    text = "foo-bar bar bar IRagRetriever retriever"
    terms = chunk_terms(text)
    expected = Counter(tokenize(text))
    entries = _entries(terms.tsvector)
    assert terms.term_count == 5  # words, not terms: identifier parts share their word's position
    assert {k.strip("'"): len(v.split(",")) for k, v in entries.items()} == dict(expected)
    assert sorted(terms.lexemes) == sorted(expected)


def test_stop_words_are_stored_but_not_counted_and_queries_drop_them() -> None:
    """Stop words keep their phrase positions; they add nothing to the BM25 length or a mixed query."""
    terms = chunk_terms("the policy of the company")
    assert _entries(terms.tsvector)["'the'"] == "1B,4B"
    assert terms.term_count == 2
    assert _query("the policy").terms == ("policy",)
    assert _query("the who").terms == ("the", "who")


def test_a_stemming_analyzer_writes_stems_at_word_positions() -> None:
    """With ``stemmer="english"`` plain words are stored stemmed; identifiers are left alone."""
    analyzer = LexicalOptions(stemmer="english").analyzer()
    entries = _entries(chunk_terms("retrieving CS1503 policies", analyzer).tsvector)
    assert entries["'retriev'"] == "1B"
    assert entries["'cs1503'"] == "2B"
    assert entries["'polici'"] == "3B"
    q = _query('"retrieval policies"', analyzer)
    assert q.match == "('retriev':B <-> 'polici':B)"


def test_lexemes_are_quoted_for_tsvector_input() -> None:
    """Quotes are doubled and backslashes escaped, so no token can break out of its literal."""
    assert quote_lexeme("it's") == "'it''s'"
    assert quote_lexeme("a\\b") == "'a\\\\b'"
    assert "'it''s':1B" in tsvector_literal(chunk_terms("it's").tsvector)


def test_over_long_tokens_are_left_out_of_the_tsvector() -> None:
    """PostgreSQL refuses lexemes over 2,047 bytes; they still count towards the document length."""
    terms = chunk_terms("short " + "x" * 3000)
    assert tsvector_literal(terms.tsvector) == "'short':1B"
    assert terms.term_count == 2


def test_free_text_becomes_an_or_of_distinct_terms() -> None:
    """Natural questions use OR semantics; query term frequencies are kept for BM25."""
    q = _query("remote work remote")
    assert q.terms == ("remote", "work")
    assert q.frequencies == (2, 1)
    assert q.match == "'remote' | 'work'"
    assert not q.has_phrases


def test_phrases_match_whole_words_in_order() -> None:
    """A quoted phrase is a <-> chain over B-weighted (whole word) positions; phrases are AND-ed."""
    q = _query('results "exact phrase" "POL-HR-014"')
    assert q.match == "('exact':B <-> 'phrase':B) & ('pol-hr-014':B)"
    assert q.has_phrases
    assert q.substring is None


def test_a_fragment_is_matched_with_like_metacharacters_escaped() -> None:
    """The fragment (the core's rule) becomes a LIKE pattern; only a lone fragment query sends one."""
    assert substring_pattern("cs1503") == "%cs1503%"
    assert substring_pattern("snake_case") == "%snake\\_case%"
    assert substring_pattern("a\\b%") == "%a\\\\b\\%%"
    assert _query("S150").substring == "%s150%"
    assert _query("(HR-01),").substring == "%hr-01%"
    assert _query("remote").substring is None
    assert _query("S150 remote").substring is None
    assert _query('"S150"').substring is None


def test_the_identifier_column_holds_the_identifier_like_words_of_a_chunk() -> None:
    text = "See POL-HR-014 (and IRagRetriever) in filename.cs, v2 of the Policy; HTML rules. POL-HR-014"
    assert chunk_terms(text).identifiers == "filename.cs pol-hr-014 v2"
    assert chunk_terms(text).identifiers == " ".join(identifier_words(DEFAULT_ANALYZER.words(text)))
    assert chunk_terms("plain words only, Like This IRagRetriever").identifiers == ""
    assert chunk_terms("").identifiers == ""


def test_the_identifier_column_is_the_same_with_stemming_and_stop_words() -> None:
    """Identifier-like words are never stemmed or dropped, so the column does not depend on the analyzer."""
    text = "Retrieving 2024-01 reports from host-1.example policies"
    stemming = LexicalOptions(stopwords="english", stemmer="english").analyzer()
    assert chunk_terms(text, stemming).identifiers == chunk_terms(text, Analyzer()).identifiers
    assert chunk_terms(text).identifiers == "2024-01 host-1.example"


def test_spellings_of_one_term_merge_in_position_order() -> None:
    """``Policy`` and ``policy`` are one lexeme; its positions come out sorted whatever the first spelling."""
    entries = _entries(chunk_terms("policy Policy remote POLICY policy").tsvector)
    assert entries["'policy'"] == "1B,2B,4B,5B"
    assert entries["'remote'"] == "3B"


def test_positions_past_the_precomputed_range_and_past_the_limit_keep_the_frequency() -> None:
    """Late positions are written exactly up to 16,383; beyond it they clamp, and the count still holds."""
    late = chunk_terms(" ".join(["filler"] * 1500) + " needle")
    assert _entries(late.tsvector)["'needle'"] == "1501B"
    clamped = chunk_terms(" ".join(f"w{i}" for i in range(16390)) + " tail tail")
    tail = _entries(clamped.tsvector)["'tail'"].split(",")
    assert tail == ["1", "16383B"]  # the clamped second occurrence becomes the lowest free unweighted position
