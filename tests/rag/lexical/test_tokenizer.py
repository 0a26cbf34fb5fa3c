"""Tokenizer: identifiers stay searchable whole and by their parts; analyzer filters spare identifiers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runiq.rag._lexical import Analyzer, primary_tokens, tokenize


@pytest.mark.parametrize(
    ("identifier", "whole", "parts"),
    [
        ("POL-HR-014", "pol-hr-014", ["pol", "hr", "014"]),
        ("IRagRetriever", "iragretriever", ["rag", "retriever"]),  # one-letter parts are not indexed
        ("filename.cs", "filename.cs", ["filename", "cs"]),
        ("CS1503", "cs1503", ["cs", "1503"]),
        ("snake_case_name", "snake_case_name", ["snake", "case", "name"]),
        ("UseRag", "userag", ["use", "rag"]),
        ("RagSearchCompleted", "ragsearchcompleted", ["rag", "search", "completed"]),
        ("HTTPServer", "httpserver", ["http", "server"]),
    ],
)
def test_identifiers_are_kept_whole_and_split_into_parts(identifier: str, whole: str, parts: list[str]) -> None:
    """An identifier yields its case-folded whole form first, then its parts."""
    assert tokenize(identifier) == [whole, *parts]
    assert primary_tokens(identifier) == [whole]


def test_plain_words_produce_one_token_each() -> None:
    """Ordinary words are single lower-case tokens in order."""
    assert tokenize("Remote work is allowed") == ["remote", "work", "is", "allowed"]


def test_trailing_punctuation_is_not_part_of_a_word() -> None:
    """Sentence punctuation around an identifier does not change it."""
    assert primary_tokens("See POL-HR-014. Then (filename.cs)!") == ["see", "pol-hr-014", "then", "filename.cs"]


def test_text_is_nfkc_normalised_and_case_folded() -> None:
    """Full-width and upper-case forms give the same tokens as plain ASCII."""
    assert primary_tokens("ＣＳ１５０３") == ["cs1503"]
    assert primary_tokens("STRASSE Straße") == ["strasse", "strasse"]


def test_primary_tokens_are_in_order_for_phrases() -> None:
    """Primary tokens keep word order (exact-phrase matching depends on it)."""
    assert primary_tokens("hybrid retrieval preserves exact phrase order") == [
        "hybrid",
        "retrieval",
        "preserves",
        "exact",
        "phrase",
        "order",
    ]


def test_analyzer_filters_only_plain_words() -> None:
    """Stop words and stemming apply to alphabetic tokens; whole identifiers such as CS1503 are untouched."""
    stems = {"policies": "policy", "cs1503": "broken", "filename.cs": "broken"}
    analyzer = Analyzer(stopwords=frozenset({"the", "cs1503"}), stemmer=lambda token: stems.get(token, token))
    terms = analyzer.query_terms("the policies CS1503 filename.cs")
    assert terms[0] == "policy"
    assert "the" not in terms and "broken" not in terms
    assert "cs1503" in terms and "filename.cs" in terms
    assert Analyzer().terms("the CS1503") == ["the", "cs1503", "cs", "1503"]


def test_stop_words_stay_indexed_but_do_not_lengthen_a_document() -> None:
    """A stop word is an index term (unstemmed) but not part of the BM25 length; parts never are."""
    analyzer = Analyzer(stopwords=frozenset({"the", "of"}), stemmer=lambda token: token.rstrip("s"))
    analysis = analyzer.analyse("the rules of POL-HR-014")
    assert analysis.terms == ["the", "rule", "of", "pol-hr-014", "pol", "hr", "014"]
    assert analysis.length == 2  # "rules" and "POL-HR-014": parts share their word's position
    assert Analyzer().analyse("IRagRetriever").length == 1
    assert Analyzer().analyse("...").length == 0


def test_a_query_of_only_stop_words_keeps_them() -> None:
    """``to be or not to be`` must still find something; mixed queries drop the stop words."""
    analyzer = Analyzer(stopwords=frozenset({"to", "be", "or", "not", "the"}))
    assert analyzer.query_terms("to be or not to be") == ["to", "be", "or", "not", "to", "be"]
    assert analyzer.query_terms("the whole policy") == ["whole", "policy"]
    assert analyzer.query_terms("") == []


@given(st.text(max_size=300))
def test_tokenize_never_fails_and_contains_every_primary_token(text: str) -> None:
    """For any text, tokenisation succeeds, is case-folded, and includes each whole word."""
    tokens = tokenize(text)
    assert all(token == token.casefold() and token for token in tokens)
    assert set(primary_tokens(text)) <= set(tokens)


@given(st.text(max_size=300))
def test_indexed_counts_agree_with_the_analysed_terms(text: str) -> None:
    """The single-pass index view (used by both stores) equals the term list and length of ``analyse``."""
    from collections import Counter

    analyzer = Analyzer(stopwords=frozenset({"the", "of", "a"}), stemmer=lambda token: token.rstrip("s") or token)
    indexed, analysis = analyzer.indexed(text), analyzer.analyse(text)
    assert indexed.counts == dict(Counter(analysis.terms))
    assert indexed.length == analysis.length
    positions = sorted(p for ps in indexed.positions.values() for p in ps)
    assert positions == list(range(1, len(primary_tokens(text)) + 1))


def test_the_split_fast_path_finds_exactly_the_regex_words() -> None:
    """Every code point is alphanumeric exactly when the word regex's ``\\w`` takes it (bar ``_``),
    and no whitespace is, so splitting first cannot change which words are found."""
    import re
    import sys

    from runiq.rag._lexical.tokenizer import _WORD, _raw_words

    word_char = re.compile(r"\w")
    for code in range(sys.maxunicode + 1):
        ch = chr(code)
        assert (ch.isalnum() or ch == "_") == bool(word_char.fullmatch(ch)), hex(code)
        assert not (ch.isspace() and word_char.fullmatch(ch)), hex(code)
    texts = [
        "POL-HR-014 covers IRagRetriever, filename.cs and CS1503.",
        "a_b __c_ _x_ ½ ² ① x²y ٣٤ 東京タワー a-b-c -a- a'b ’x a\u00a0b tab\tsep new\nline \u2028sep ǅ ﬁ",
        "end. (paren) [x] {y} \"quoted\" 'single' a.b. ..a.. a--b a//b",
        "",
        "   ",
    ]
    for text in texts:
        assert _raw_words(text) == _WORD.findall(text), text


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_the_split_fast_path_agrees_with_the_regex_on_any_text(text: str) -> None:
    """Property form of the above, over arbitrary Unicode text."""
    from runiq.rag._lexical.tokenizer import _WORD, _raw_words

    assert _raw_words(text) == _WORD.findall(text)
