"""PostingList: sorted compact arrays with tombstones, revival, compaction and frequency widening."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from runiq.rag.lexical.postings import PostingList


def _live(postings: PostingList) -> dict[int, int]:
    rows, tfs = postings.arrays()
    return {int(r): int(t) for r, t in zip(rows.tolist(), tfs.tolist(), strict=True) if t}


def test_rows_stay_ascending_whatever_the_insertion_order() -> None:
    """Out-of-order rows (reused holes) are inserted in place, so binary search keeps working."""
    postings = PostingList()
    for row, tf in [(5, 1), (9, 2), (1, 3), (7, 1), (0, 4)]:
        postings.add(row, tf)
    rows, tfs = postings.arrays()
    assert rows.tolist() == [0, 1, 5, 7, 9]
    assert tfs.tolist() == [4, 3, 1, 1, 2]
    assert rows.dtype == np.int32
    assert postings.frequency == 5


def test_a_removed_row_is_a_tombstone_that_a_re_add_revives() -> None:
    """remove() zeroes the frequency in place (no shifting); adding the row back reuses the slot."""
    postings = PostingList()
    for row in range(8):
        postings.add(row, 1)
    assert postings.remove(3)
    rows, tfs = postings.arrays()
    assert rows.tolist() == list(range(8)) and tfs[3] == 0
    assert postings.frequency == 7
    assert postings.live_rows().tolist() == [0, 1, 2, 4, 5, 6, 7]
    postings.add(3, 5)
    assert postings.arrays()[0].tolist() == list(range(8))
    assert _live(postings)[3] == 5 and postings.frequency == 8


def test_removing_an_absent_or_dead_row_reports_false() -> None:
    postings = PostingList()
    assert not postings.remove(0)
    postings.add(2, 1)
    postings.add(4, 1)
    assert not postings.remove(3)
    assert not postings.remove(9)
    assert postings.remove(2)
    assert not postings.remove(2)
    assert postings.frequency == 1


def test_tombstones_are_compacted_past_a_quarter() -> None:
    """Dead entries never exceed a quarter of the list: compaction drops them and frees capacity."""
    postings = PostingList()
    for row in range(100):
        postings.add(row, 1)
    for row in range(0, 100, 2):
        postings.remove(row)
        rows, tfs = postings.arrays()
        assert int(np.count_nonzero(tfs == 0)) * 4 <= rows.shape[0]
    assert postings.live_rows().tolist() == list(range(1, 100, 2))
    assert postings.arrays()[0].shape[0] < 50 * 4 / 3
    capacity = postings.nbytes
    for row in range(1, 95, 2):
        postings.remove(row)
    assert postings.nbytes < capacity / 4
    assert postings.live_rows().tolist() == [95, 97, 99]


def test_frequencies_above_uint16_widen_instead_of_wrapping() -> None:
    postings = PostingList()
    postings.add(0, 3)
    postings.add(1, 70_000)
    assert _live(postings) == {0: 3, 1: 70_000}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 40), st.integers(1, 9)), max_size=120))
def test_any_sequence_matches_a_dict(ops: list[tuple[bool, int, int]]) -> None:
    """Adds and removes in any order leave exactly the live (row, tf) pairs a dict would hold."""
    postings = PostingList()
    expected: dict[int, int] = {}
    for add, row, tf in ops:
        if add and row not in expected:
            postings.add(row, tf)
            expected[row] = tf
        elif not add:
            assert postings.remove(row) == (row in expected)
            expected.pop(row, None)
    assert _live(postings) == expected
    assert postings.frequency == len(expected)
    rows = postings.arrays()[0]
    assert (np.diff(rows) > 0).all()
