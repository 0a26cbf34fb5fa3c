"""Pure lexical term building: tsvector literals, tsquery literals and the substring safety net."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from runiq.rag import parse_lexical_query
from runiq.rag.lexical import LexicalOptions, tokenize
from runiq_postgresql.lexical import (
    chunk_terms,
    identifier_text,
    query_terms,
    quote_lexeme,
    substring_pattern,
    tsvector_literal,
)


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
    assert query_terms(parse_lexical_query("the policy")).terms == ("policy",)
    assert query_terms(parse_lexical_query("the who")).terms == ("the", "who")


def test_a_stemming_analyzer_writes_stems_at_word_positions() -> None:
    """With ``stemmer="english"`` plain words are stored stemmed; identifiers are left alone."""
    analyzer = LexicalOptions(stemmer="english").analyzer()
    entries = _entries(chunk_terms("retrieving CS1503 policies", analyzer).tsvector)
    assert entries["'retriev'"] == "1B"
    assert entries["'cs1503'"] == "2B"
    assert entries["'polici'"] == "3B"
    q = query_terms(parse_lexical_query('"retrieval policies"'), analyzer)
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
    q = query_terms(parse_lexical_query("remote work remote"))
    assert q.terms == ("remote", "work")
    assert q.frequencies == (2, 1)
    assert q.match == "'remote' | 'work'"
    assert not q.has_phrases


def test_phrases_match_whole_words_in_order() -> None:
    """A quoted phrase is a <-> chain over B-weighted (whole word) positions; phrases are AND-ed."""
    q = query_terms(parse_lexical_query('results "exact phrase" "POL-HR-014"'))
    assert q.match == "('exact':B <-> 'phrase':B) & ('pol-hr-014':B)"
    assert q.has_phrases
    assert q.substring is None


def test_substring_net_is_only_for_identifier_like_words() -> None:
    """Only one identifier-like word uses the trigram path; LIKE metacharacters are escaped."""
    assert substring_pattern("CS1503") == "%cs1503%"
    assert substring_pattern("snake_case") == "%snake\\_case%"
    assert substring_pattern("100%") == "%100\\%%"
    assert substring_pattern("IRagRetriever") == "%iragretriever%"
    assert substring_pattern("remote") is None
    assert substring_pattern("remote work") is None
    assert substring_pattern("ab") is None


def test_identifier_text_keeps_the_identifier_like_words_of_a_chunk() -> None:
    text = "See POL-HR-014 (and IRagRetriever) in filename.cs, v2 of the Policy; HTML rules. POL-HR-014"
    assert identifier_text(text) == "filename.cs, iragretriever) pol-hr-014 rules. v2"
    assert identifier_text("plain words only, Like This") == ""
    assert identifier_text("") == ""


def test_long_plain_words_are_not_remembered() -> None:
    """Text without spaces makes paragraph-long "words" that never recur: they must not fill the cache."""
    from runiq_postgresql import lexical

    before = len(lexical._plain_words)
    assert identifier_text("\u6f22\u5b57" * 500 + " " + "x" * 70) == ""
    assert len(lexical._plain_words) == before
    assert identifier_text("shortplainword") == ""
    assert "shortplainword" in lexical._plain_words


# Characters whose lower-casing does not depend on their neighbours (no final sigma): letters of both
# cases, marks, digits, and punctuation the marks rule does not cover; words of letters only (plain or
# camelCase) or of anything, separated by several kinds of whitespace.
_LETTERS = list("aAbBzZ\u00e9\u00c9\u00df\u0130")
_OTHERS = list("09\u0661-._:/#@+(),;'\"%_")
_WORD = st.one_of(
    st.text(st.sampled_from(_LETTERS), min_size=1, max_size=8),
    st.text(st.sampled_from(_LETTERS + _OTHERS), min_size=1, max_size=8),
)
_CONTENT = st.lists(st.tuples(_WORD, st.sampled_from([" ", "\t", "\n", "\u00a0", "\u2003"])), max_size=8).map(
    lambda ws: "".join(w + sep for w, sep in ws)
)
_ALPHABET = st.sampled_from(_LETTERS + _OTHERS + [" "])


@settings(max_examples=500)
@given(content=_CONTENT, data=st.data())
def test_every_substring_query_found_in_the_content_is_found_in_its_identifiers(
    content: str, data: st.DataObject
) -> None:
    """What the trigram index covers loses no match: a query taking the substring path that occurs in
    the content (as written) also occurs in the chunk's identifier text."""
    # Mostly a slice of one word (where matches live), sometimes of the whole text (spanning words).
    words = content.split()
    source = data.draw(st.sampled_from(words)) if words and data.draw(st.booleans()) else content
    if len(source) < 3:  # shorter queries never take the substring path
        return
    start = data.draw(st.integers(0, len(source) - 3))
    query = source[start : data.draw(st.integers(start + 3, len(source)))]
    if substring_pattern(query) is None:
        return
    assert query.strip().lower() in identifier_text(content)


@given(content=_CONTENT, query=st.text(_ALPHABET, min_size=3, max_size=8))
def test_identifier_text_adds_no_match_the_content_lacks(content: str, query: str) -> None:
    if substring_pattern(query) is None:
        return
    needle = query.strip().lower()
    if needle in identifier_text(content):
        assert needle in content.lower()


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
