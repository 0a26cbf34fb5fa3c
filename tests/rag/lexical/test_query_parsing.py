"""Lexical query parsing: quoted phrases, free terms, unbalanced quotes and hostile text."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from runiq.rag._lexical.query import contains_phrase
from runiq.rag.providers import parse_lexical_query


def test_whole_query_in_quotes_is_one_phrase() -> None:
    """Text wrapped in double quotes is an exact phrase with no free terms."""
    query = parse_lexical_query('"exact phrase order"')
    assert query.phrases == ("exact phrase order",)
    assert query.free_text == ""
    assert query.phrase_tokens == (("exact", "phrase", "order"),)
    assert not query.is_empty


def test_quoted_parts_mix_with_free_terms() -> None:
    """Quoted parts become phrases; the rest stays free text; both are scored."""
    query = parse_lexical_query('results "exact phrase" CS1503 "remote work"')
    assert query.phrases == ("exact phrase", "remote work")
    assert query.free_text.split() == ["results", "CS1503"]
    assert set(query.text.split()) == {"exact", "phrase", "results", "CS1503", "remote", "work"}


@pytest.mark.parametrize("text", ['"unbalanced', 'unbalanced"', 'a "b c" d "e'])
def test_unbalanced_quote_is_ordinary_punctuation(text: str) -> None:
    """A quote without a partner does not open a phrase and does not raise."""
    query = parse_lexical_query(text)
    assert all('"' not in part for part in (query.text, query.free_text, *query.phrases))
    if text.count('"') == 1:
        assert query.phrases == ()


def test_balanced_pairs_are_taken_first_and_the_stray_quote_ignored() -> None:
    """'a "b c" d "e' has one phrase ("b c") and free terms a, d, e."""
    query = parse_lexical_query('a "b c" d "e')
    assert query.phrases == ("b c",)
    assert query.free_text.split() == ["a", "d", "e"]


@pytest.mark.parametrize("text", ['""', '"   "', "!!! ???", "...", "\x00\x07"])
def test_queries_without_words_are_empty(text: str) -> None:
    """Empty phrases, punctuation and control characters leave nothing to search."""
    query = parse_lexical_query(text)
    assert query.is_empty
    assert query.phrase_tokens == ()


def test_control_characters_are_whitespace() -> None:
    """Control characters separate words instead of joining or breaking them."""
    query = parse_lexical_query("remote\x00work\x1fpolicy")
    assert query.text.split() == ["remote", "work", "policy"]


@given(st.text(max_size=400))
def test_parsing_never_raises(text: str) -> None:
    """Any user text parses; phrases never contain quotes."""
    query = parse_lexical_query(text)
    assert all('"' not in phrase for phrase in query.phrases)
    assert '"' not in query.free_text


def test_contains_phrase_requires_contiguous_order() -> None:
    """A phrase matches only as a contiguous run in order."""
    tokens = ["hybrid", "retrieval", "preserves", "exact", "phrase", "order"]
    assert contains_phrase(tokens, ("exact", "phrase", "order"))
    assert not contains_phrase(tokens, ("phrase", "exact", "order"))
    assert not contains_phrase(tokens, ("hybrid", "preserves"))
    assert not contains_phrase(tokens[:2], ("hybrid", "retrieval", "preserves"))
    assert contains_phrase(tokens, ())
