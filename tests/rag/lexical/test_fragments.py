"""The identifier fragment rule, and why an index finds its matches exactly by scanning its vocabulary."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runiq.rag._lexical import Analyzer, BM25Index, LexicalOptions
from runiq.rag._lexical.fragments import identifier_words, is_identifier_like, query_fragment

ANALYZER = Analyzer()


def _fragment(text: str, *, has_phrases: bool = False) -> str | None:
    return query_fragment(ANALYZER.words(text), has_phrases=has_phrases)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("S150", "s150"),
        ("(HR-01),", "hr-01"),
        ("name.c", "name.c"),
        ("snake_case", "snake_case"),
        ("２０２４", "2024"),  # NFKC: full-width digits
        ("remote", None),  # a plain word
        ("IRagRetriever", None),  # camelCase: found whole and by its parts
        ("S1", None),  # too short
        ("S150 build", None),  # two words
        ("x" * 199 + "1", "x" * 199 + "1"),
        ("x" * 200 + "1", None),  # too long
    ],
)
def test_a_fragment_is_one_identifier_like_word(text: str, expected: str | None) -> None:
    assert _fragment(text) == expected


def test_a_query_with_a_phrase_has_no_fragment() -> None:
    assert _fragment("S150", has_phrases=True) is None


def test_identifier_words_are_the_distinct_case_folded_identifier_like_words() -> None:
    words = ANALYZER.words("See POL-HR-014 and pol-hr-014, IRagRetriever in filename.cs (v2) or Policy.")
    assert identifier_words(words) == ["filename.cs", "pol-hr-014", "v2"]
    assert not is_identifier_like("Policy")
    assert is_identifier_like("a+b")


_PIECES = st.sampled_from(["a", "B", "cs", "S", "15", "150", "3", "-", ".", "_", "ß", "İ", "x1", "Retrieving"])
_WORD = st.lists(_PIECES, min_size=1, max_size=4).map("".join)
_TEXT = st.lists(_WORD, min_size=1, max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_TEXT, min_size=1, max_size=6), data=st.data())
@pytest.mark.parametrize(
    "options",
    [LexicalOptions(stopwords="none"), LexicalOptions(stopwords="english", stemmer="english")],
    ids=["plain", "stemming"],
)
def test_the_vocabulary_scan_finds_exactly_the_rows_with_a_word_holding_the_fragment(
    options: LexicalOptions, texts: list[str], data: st.DataObject
) -> None:
    """Every index term holding a fragment is an identifier-like word or a digit run inside one, whatever
    the stemmer and stop words: the rows holding such terms are exactly the rows whose words hold it."""
    analyzer = options.analyzer()
    index = BM25Index(analyzer)
    for row, text in enumerate(texts):
        index.add(row, text)
    source = data.draw(st.sampled_from(texts))
    start = data.draw(st.integers(0, max(len(source) - 3, 0)))
    fragment = query_fragment(analyzer.words(source[start : start + data.draw(st.integers(3, 8))]), has_phrases=False)
    if fragment is None:
        return
    expected = [
        row
        for row, text in enumerate(texts)
        if any(fragment in word for word in identifier_words(analyzer.words(text)))
    ]
    assert index.rows_with_fragment(fragment).tolist() == expected
