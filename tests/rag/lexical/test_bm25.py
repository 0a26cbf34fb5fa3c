"""BM25Index: the documented formula, and incremental add/remove equal to a fresh build."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runiq.rag.lexical import BM25Index, BM25Parameters
from runiq.rag.lexical.query import MAX_QUERY_TERMS


def _scores(index: BM25Index, text: str) -> dict[int, float]:
    rows, values = index.scores(text)
    return dict(zip(rows.tolist(), values.tolist(), strict=True))


def test_scores_follow_the_lucene_bm25_formula() -> None:
    """score = idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)), idf = ln(1 + (N - df + 0.5) / (df + 0.5))."""
    index = BM25Index()
    index.add(0, "apple apple banana")
    index.add(1, "banana cherry")
    index.add(2, "cherry date elder fig")
    k1, b = 1.5, 0.75
    avgdl = (3 + 2 + 4) / 3

    def term(tf: int, df: int, dl: int) -> float:
        idf = math.log(1 + (3 - df + 0.5) / (df + 0.5))
        return idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))

    scores = _scores(index, "apple banana")
    assert set(scores) == {0, 1}
    assert scores[0] == pytest.approx(term(2, 1, 3) + term(1, 2, 3))
    assert scores[1] == pytest.approx(term(1, 2, 2))


def test_repeated_query_terms_weigh_more() -> None:
    """A term repeated in the query counts once per repetition."""
    index = BM25Index()
    index.add(0, "apple pie")
    index.add(1, "banana split")
    assert _scores(index, "apple apple")[0] == pytest.approx(2 * _scores(index, "apple")[0])


def test_only_rows_with_a_match_are_scored() -> None:
    """Rows without any query term are absent; unknown terms and an empty index give nothing."""
    index = BM25Index()
    assert _scores(index, "anything") == {}
    index.add(0, "alpha")
    index.add(1, "beta")
    assert set(_scores(index, "alpha")) == {0}
    assert _scores(index, "gamma") == {}
    assert _scores(index, "!!!") == {}


def test_adding_an_existing_row_replaces_it() -> None:
    """add() on a known row replaces its text instead of merging."""
    index = BM25Index()
    index.add(0, "alpha")
    index.add(0, "beta")
    assert len(index) == 1
    assert _scores(index, "alpha") == {}
    assert set(_scores(index, "beta")) == {0}


def test_query_terms_are_bounded() -> None:
    """Only the first MAX_QUERY_TERMS query terms are used."""
    index = BM25Index()
    index.add(0, "needle")
    filler = " ".join(f"filler{i}" for i in range(MAX_QUERY_TERMS))
    assert _scores(index, f"needle {filler}") != {}
    assert _scores(index, f"{filler} needle") == {}


def test_custom_parameters_change_length_normalisation() -> None:
    """With b = 0, document length no longer matters."""
    index = BM25Index(parameters=BM25Parameters(k1=1.2, b=0.0))
    index.add(0, "apple")
    index.add(1, "apple " + " ".join(f"w{i}" for i in range(50)))
    index.add(2, "other")
    scores = _scores(index, "apple")
    assert scores[0] == pytest.approx(scores[1])


WORDS = ["alpha", "beta", "gamma", "delta", "POL-HR-014", "CS1503", "filename.cs", "IRagRetriever"]
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
operations = st.lists(
    st.tuples(st.sampled_from(["add", "remove", "remove_text"]), st.integers(min_value=0, max_value=7), texts),
    min_size=1,
    max_size=40,
)


@settings(max_examples=80, deadline=None)
@given(operations, st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join))
def test_incremental_updates_equal_a_fresh_build(ops: list[tuple[str, int, str]], query: str) -> None:
    """Any sequence of adds and removes scores exactly like an index built from the final rows."""
    incremental = BM25Index()
    live: dict[int, str] = {}
    for op, row, text in ops:
        if op == "add":
            incremental.add(row, text)
            live[row] = text
        elif op == "remove":
            incremental.remove(row)
            live.pop(row, None)
        elif row in live:
            incremental.remove_text(row, live.pop(row))
    fresh = BM25Index()
    for row, text in live.items():
        fresh.add(row, text)
    assert len(incremental) == len(fresh)
    got, expected = _scores(incremental, query), _scores(fresh, query)
    assert set(got) == set(expected)
    for row in expected:
        assert got[row] == pytest.approx(expected[row], rel=1e-12)
    assert np.isfinite(list(got.values())).all()
