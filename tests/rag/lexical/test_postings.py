"""PostingList: compact sorted arrays with tombstones, revival, compaction, a side part for
out-of-order rows, and frequency widening."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from runiq.rag._lexical.postings import PostingList


def _live(postings: PostingList) -> dict[int, int]:
    pairs = [(r, t) for rows, tfs in postings.parts() for r, t in zip(rows.tolist(), tfs.tolist(), strict=True)]
    assert len({r for r, _ in pairs}) == len(pairs)  # every row appears once
    return {r: t for r, t in pairs if t}


def _main(postings: PostingList) -> list[int]:
    return postings.parts()[0][0].tolist()


def test_out_of_order_rows_wait_in_a_side_part_then_merge_sorted() -> None:
    """Rows below the highest (reused holes) do not shift the sorted main part; they are appended to a
    side part, merged in one pass once it outgrows max(16, main / 16)."""
    postings = PostingList()
    for row in range(100, 200):
        postings.add(row, 1)
    for row in (5, 1, 7):
        postings.add(row, 2)
    assert len(postings.parts()) == 2
    assert _main(postings) == list(range(100, 200))
    assert postings.parts()[0][0].dtype == np.int32
    for row in range(10, 24):
        postings.add(row, 3)
    assert len(postings.parts()) == 1
    assert _main(postings) == [1, 5, 7, *range(10, 24), *range(100, 200)]
    assert postings.frequency == 117
    assert _live(postings)[7] == 2 and _live(postings)[12] == 3


def test_a_removed_row_is_a_tombstone_that_a_re_add_revives() -> None:
    """remove() zeroes the frequency in place (no shifting); adding the row back reuses the slot."""
    postings = PostingList()
    for row in range(8):
        postings.add(row, 1)
    assert postings.remove(3)
    rows, tfs = postings.parts()[0]
    assert rows.tolist() == list(range(8)) and tfs[3] == 0
    assert postings.frequency == 7
    assert postings.live_rows().tolist() == [0, 1, 2, 4, 5, 6, 7]
    postings.add(3, 5)
    assert postings.parts()[0][0].tolist() == list(range(8))
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
        rows, tfs = postings.parts()[0]
        assert int(np.count_nonzero(tfs == 0)) * 4 <= rows.shape[0]
    assert postings.live_rows().tolist() == list(range(1, 100, 2))
    assert postings.parts()[0][0].shape[0] < 50 * 4 / 3
    capacity = postings.nbytes
    for row in range(1, 95, 2):
        postings.remove(row)
    assert postings.nbytes < capacity / 4
    assert postings.live_rows().tolist() == [95, 97, 99]


def test_frequencies_widen_instead_of_wrapping() -> None:
    """Frequencies start as uint8 (most postings) and widen to uint16, then uint32, when needed."""
    postings = PostingList()
    postings.add(5, 3)
    assert postings.parts()[0][1].dtype == np.uint8
    postings.add(6, 300)
    assert postings.parts()[0][1].dtype == np.uint16
    postings.add(1, 70_000)  # into the side part
    postings.add(7, 2)
    assert _live(postings) == {1: 70_000, 5: 3, 6: 300, 7: 2}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 60), st.sampled_from([1, 2, 9, 300, 70_000])), max_size=200))
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
    assert sorted(postings.live_rows().tolist()) == sorted(expected)
    assert (np.diff(postings.parts()[0][0]) > 0).all()
