"""BM25Index: the documented formula, compact postings, and incremental updates equal to a fresh build."""

from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runiq.errors import RagValidationError
from runiq.rag._lexical import DEFAULT_ANALYZER, BM25Index, BM25Parameters, bm25_idf, bm25_length_norm, bm25_term_score
from runiq.rag._lexical.query import MAX_QUERY_TERMS


def _scores(index: BM25Index, text: str) -> dict[int, float]:
    rows, values = index.scores(text)
    return dict(zip(rows.tolist(), values.tolist(), strict=True))


def _top(index: BM25Index, text: str, k: int) -> list[tuple[int, float]]:
    return sorted(_scores(index, text).items(), key=lambda item: (-item[1], item[0]))[:k]


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


def test_the_shared_formula_functions_are_the_documented_formula() -> None:
    """bm25_idf / bm25_length_norm / bm25_term_score: one definition, for scalars and arrays alike."""
    params = BM25Parameters(k1=1.2, b=0.5)
    assert bm25_idf(10, 3) == math.log(1 + (10 - 3 + 0.5) / (3 + 0.5))
    assert bm25_length_norm(4, 2.0, params) == 1.2 * (1 - 0.5 + 0.5 * 4 / 2.0)
    assert bm25_term_score(2.0, 3, 0.9) == 2.0 * 3 / (3 + 0.9)
    lengths = np.array([1.0, 4.0, 9.0])
    norms = bm25_length_norm(lengths, 3.0, params)
    assert norms.tolist() == [bm25_length_norm(float(x), 3.0, params) for x in lengths]
    tfs = np.array([0, 1, 7], dtype=np.uint16)
    assert bm25_term_score(1.7, tfs, norms).tolist() == [
        bm25_term_score(1.7, int(t), float(n)) for t, n in zip(tfs, norms, strict=True)
    ]
    assert bm25_term_score(1.7, tfs, norms)[0] == 0.0


@pytest.mark.parametrize(("k1", "b"), [(0.0, 0.75), (-1.0, 0.75), (1.2, -0.1), (1.2, 1.5), (math.nan, 0.5)])
def test_parameters_outside_the_formula_s_domain_are_refused(k1: float, b: float) -> None:
    with pytest.raises(RagValidationError):
        BM25Parameters(k1=k1, b=b)


def test_repeated_query_terms_weigh_more() -> None:
    """A term repeated in the query counts once per repetition."""
    index = BM25Index()
    index.add(0, "apple pie")
    index.add(1, "banana split")
    assert _scores(index, "apple apple")[0] == 2 * _scores(index, "apple")[0]


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


def test_removed_rows_score_nothing_even_with_full_length_normalisation() -> None:
    """A removed row leaves tombstones (tf 0); with b = 1 they must still score 0.0, never NaN."""
    index = BM25Index(parameters=BM25Parameters(k1=1.2, b=1.0))
    for row in range(6):
        index.add(row, "apple banana")
    index.remove_text(2, "apple banana")
    scores = index.score_rows("apple")
    assert np.isfinite(scores).all()
    assert scores[2] == 0.0
    assert set(_scores(index, "apple")) == {0, 1, 3, 4, 5}


def test_a_write_invalidates_remembered_contributions() -> None:
    """Scores reused between writes are recomputed after one: N and avgdl changed."""
    index = BM25Index(DEFAULT_ANALYZER)
    index.add(0, "apple pie")
    index.add(1, "banana split")
    before = _scores(index, "apple")
    index.add(2, "cherry tart with cream")
    after = _scores(index, "apple")
    fresh = BM25Index(DEFAULT_ANALYZER)
    for row, text in enumerate(["apple pie", "banana split", "cherry tart with cream"]):
        fresh.add(row, text)
    assert after == _scores(fresh, "apple")
    assert after != before


def test_postings_are_stored_compactly() -> None:
    """Memory per posting is a few bytes (int32 row, uint16 tf), not a Python dict entry (~100 bytes)."""
    rng = np.random.default_rng(7)
    vocabulary = ["".join(rng.choice(list("abcdefghij"), size=6)) for _ in range(300)]
    texts = [" ".join(rng.choice(vocabulary, size=40)) for _ in range(3000)]
    postings = sum(len(set(text.split())) for text in texts)  # plain words: one term each
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        index = BM25Index()
        for row, text in enumerate(texts):
            index.add(row, text)
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(index) == 3000
    assert held / postings < 10


WORDS = ["alpha", "beta", "gamma", "delta", "the", "POL-HR-014", "CS1503", "filename.cs", "IRagRetriever"]
texts = st.lists(st.sampled_from(WORDS), min_size=0, max_size=8).map(" ".join)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
operations = st.lists(
    st.tuples(st.sampled_from(["add", "remove", "remove_text"]), st.integers(min_value=0, max_value=9), texts),
    min_size=1,
    max_size=50,
)


@settings(max_examples=80, deadline=None)
@given(operations, queries)
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
        elif op == "remove_text" and row in live:
            incremental.remove_text(row, live.pop(row))
    fresh = BM25Index()
    for row, text in sorted(live.items()):
        fresh.add(row, text)
    assert len(incremental) == len(fresh)
    assert _scores(incremental, query) == _scores(fresh, query)
    assert incremental.rows().tolist() == sorted(live)


def test_remembered_contributions_stay_within_half_the_postings() -> None:
    """Between writes, each queried term's scores are kept (8 bytes a posting) for at most half of all
    postings, so querying every term cannot double the index's memory."""
    rng = np.random.default_rng(11)
    vocabulary = ["".join(rng.choice(list("klmnopqrst"), size=5)) for _ in range(200)]
    index = BM25Index()
    for row in range(500):
        index.add(row, " ".join(rng.choice(vocabulary, size=30)))
    held = sum(index.rows_with_all([word]).shape[0] for word in vocabulary)
    base = index.nbytes + 8 * 500  # plus the per-row norms computed by the first query
    first = {word: _scores(index, word) for word in vocabulary}
    assert index.nbytes - base <= 8 * held / 2
    assert index.nbytes - base >= 8 * held / 4  # it does remember
    assert {word: _scores(index, word) for word in vocabulary} == first
