"""Top-k candidate selection over dense scores: exact boundary ties, filters, probes and grouping."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from runiq.rag._lexical.selection import score_groups, top_candidates


def _expected(scores: np.ndarray, k: int, among: np.ndarray | None) -> list[int]:
    universe = range(scores.shape[0]) if among is None else [r for r in among if r < scores.shape[0]]
    rows = [int(r) for r in universe if scores[r] > 0]
    ranked = sorted((scores[r] for r in rows), reverse=True)
    if len(ranked) <= k:
        return sorted(rows)
    kth = ranked[k - 1]
    return sorted(r for r in rows if scores[r] >= kth)


def test_every_row_tied_with_the_kth_is_kept() -> None:
    scores = np.array([0.0, 2.0, 1.0, 1.0, 3.0, 1.0])
    assert top_candidates(scores, 2).tolist() == [1, 4]
    assert top_candidates(scores, 3).tolist() == [1, 2, 3, 4, 5]
    assert top_candidates(scores, 10).tolist() == [1, 2, 3, 4, 5]


def test_zero_scores_are_never_candidates() -> None:
    scores = np.array([0.0, 0.0, 0.5])
    assert top_candidates(scores, 2).tolist() == [2]
    assert top_candidates(np.zeros(4), 2).tolist() == []


def test_among_restricts_candidates_and_ignores_rows_beyond_the_scores() -> None:
    scores = np.array([5.0, 4.0, 3.0, 2.0])
    assert top_candidates(scores, 2, among=np.array([1, 3, 9])).tolist() == [1, 3]


def test_groups_come_best_first_with_equal_scores_together() -> None:
    scores = np.array([1.0, 3.0, 1.0, 2.0, 3.0])
    assert list(score_groups(scores, np.array([0, 1, 2, 3, 4]))) == [[1, 4], [3], [0, 2]]
    assert list(score_groups(scores, np.array([], dtype=np.int64))) == []


values = st.lists(st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 7.25]), min_size=1, max_size=60)


@settings(max_examples=300, deadline=None)
@given(values, st.integers(min_value=1, max_value=12), st.data())
def test_candidates_are_exactly_the_k_best_and_their_ties(scores_: list[float], k: int, data: st.DataObject) -> None:
    """With or without a filter, and with any probe of >= k positive rows, the candidates are the same."""
    scores = np.array(scores_)
    size = scores.shape[0]
    among = data.draw(
        st.one_of(st.none(), st.sets(st.integers(0, size + 3)).map(lambda s: np.array(sorted(s), dtype=np.int64)))
    )
    positive = np.flatnonzero(scores > 0)
    probe = None
    if among is None and positive.shape[0] >= k:
        chosen = data.draw(st.sets(st.sampled_from(positive.tolist()), min_size=k))
        probe = np.array(sorted(chosen), dtype=np.int32)
    got = top_candidates(scores, k, among, probe).tolist()
    assert got == _expected(scores, k, among)
