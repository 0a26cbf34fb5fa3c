"""The block cache: lexemes decoded per table, reassembled from held and new blocks, least recently used out."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from runiq_postgresql.blockcache import BlockCache, HeldTerm
from runiq_postgresql.postings import TermPostings


def _block(block: int, term: str, rows: list[int], *, dead: bool = False) -> dict[str, Any]:
    return {
        "block": block,
        "term": term,
        "dead": dead,
        "high": 0,
        "wide": False,
        "rows": b"".join(row.to_bytes(4, "big") for row in rows),
        "tfs": None if dead else bytes(len(rows)),
        "lengths": None if dead else b"".join((10 + row).to_bytes(2, "big") for row in rows),
    }


def _left_out(block: dict[str, Any]) -> dict[str, Any]:
    """The block as the server returns it to a caller that holds it: columns left out."""
    return block | {"rows": None, "tfs": None, "lengths": None}


def _assemble(
    cache: BlockCache, relation: int, term: str, blocks: list[dict[str, Any]], held: HeldTerm | None
) -> TermPostings:
    """``blocks`` as the server lists them: every block's id, the columns of those not held."""
    ids = [block["block"] for block in blocks]
    return cache.assemble(relation, term, ids, [block for block in blocks if block["rows"] is not None], held)


def test_held_lexemes_are_those_of_the_terms_and_table_asked_for() -> None:
    cache = BlockCache(1 << 20)
    _assemble(cache, 7, "alpha", [_block(1, "alpha", [1, 2])], None)
    _assemble(cache, 7, "beta", [_block(2, "beta", [3])], None)
    _assemble(cache, 8, "alpha", [_block(1, "alpha", [5])], None)  # another postings table, same block id
    held = cache.held(7, ["alpha", "missing"])
    assert list(held) == ["alpha"]
    assert held["alpha"].postings.rows.tolist() == [1, 2]
    assert list(held["alpha"].blocks) == [1]
    assert cache.held(9, ["alpha", "beta"]) == {}
    assert set(cache.held(7, ["alpha", "beta"])) == {"alpha", "beta"}


def test_the_same_blocks_again_reuse_the_decoded_postings() -> None:
    cache = BlockCache(1 << 20)
    first = _assemble(cache, 1, "alpha", [_block(1, "alpha", [1, 2]), _block(2, "alpha", [4])], None)
    held = cache.held(1, ["alpha"])["alpha"]
    again = _assemble(
        cache, 1, "alpha", [_left_out(_block(2, "alpha", [4])), _left_out(_block(1, "alpha", [1, 2]))], held
    )
    assert again is first


def test_new_blocks_join_the_held_ones_and_vanished_blocks_leave() -> None:
    """A merge replaced block 1 by block 3; block 2 stays held; a tombstone arrives."""
    cache = BlockCache(1 << 20)
    _assemble(cache, 1, "alpha", [_block(1, "alpha", [1, 2]), _block(2, "alpha", [4, 5])], None)
    held = cache.held(1, ["alpha"])["alpha"]
    blocks = [_left_out(_block(2, "alpha", [4, 5])), _block(3, "alpha", [1, 2, 3]), _block(4, "alpha", [2], dead=True)]
    postings = _assemble(cache, 1, "alpha", blocks, held)
    assert sorted(postings.rows.tolist()) == [1, 2, 3, 4, 5]
    assert postings.dead.tolist() == [2]
    assert sorted(zip(postings.rows.tolist(), postings.lengths.tolist(), strict=True)) == [
        (1, 11),
        (2, 12),
        (3, 13),
        (4, 14),
        (5, 15),
    ]
    # The slices recorded let the next assembly cut the held blocks out again.
    held = cache.held(1, ["alpha"])["alpha"]
    later = _assemble(cache, 1, "alpha", [_left_out(_block(3, "alpha", [1, 2, 3])), _block(5, "alpha", [9])], held)
    assert later.rows.tolist() == [1, 2, 3, 9]
    assert later.dead.tolist() == []
    assert later.lengths.tolist() == [11, 12, 13, 19]


def test_a_block_listed_but_neither_held_nor_read_is_a_caller_error() -> None:
    cache = BlockCache(1 << 20)
    with pytest.raises(ValueError, match="neither held nor read"):
        _assemble(cache, 1, "alpha", [_left_out(_block(1, "alpha", [1]))], None)


def test_the_least_recently_used_lexemes_leave_first_and_held_copies_survive() -> None:
    cache = BlockCache(1 << 20)
    entry = _assemble(cache, 1, "t0", [_block(0, "t0", list(range(100)))], None)
    per_term = cache.size
    cache = BlockCache(3 * per_term)  # room for three lexemes of 100 postings
    for term in range(3):
        _assemble(cache, 1, f"t{term}", [_block(term, f"t{term}", list(range(100)))], None)
    pinned = cache.held(1, ["t0"])  # t0 is now the most recently used
    _assemble(cache, 1, "t3", [_block(3, "t3", list(range(100)))], None)
    assert cache.held(1, ["t1"]) == {}  # the least recently used went
    assert set(cache.held(1, ["t0", "t2", "t3"])) == {"t0", "t2", "t3"}
    assert cache.size <= 3 * per_term
    _assemble(cache, 1, "t4", [_block(4, "t4", list(range(250)))], None)  # bigger: evicts as many as needed
    assert cache.size <= 3 * per_term
    assert pinned["t0"].postings.rows.tolist() == entry.rows.tolist()  # what a query already holds stays usable


def test_a_lexeme_over_the_budget_is_not_kept() -> None:
    cache = BlockCache(1000)
    postings = _assemble(cache, 1, "huge", [_block(1, "huge", list(range(1000)))], None)
    assert len(postings.rows) == 1000
    assert cache.held(1, ["huge"]) == {}
    assert cache.size == 0


def test_contributions_are_remembered_only_while_there_is_room() -> None:
    """Room for a lexeme's postings but not for its contributions (8 bytes a posting): the postings are
    kept and the scorer recomputes the contributions each time."""
    roomy = BlockCache(1 << 20)
    kept = _assemble(roomy, 1, "alpha", [_block(1, "alpha", list(range(100)))], None)
    assert kept.memoise
    without = roomy.size - 8 * 100
    tight = BlockCache(without + 400)
    postings = _assemble(tight, 1, "alpha", [_block(1, "alpha", list(range(100)))], None)
    assert not postings.memoise
    assert set(tight.held(1, ["alpha"])) == {"alpha"}
    assert tight.size == without
    assert postings.rows.dtype == np.int32  # row ids that fit are kept in four bytes
