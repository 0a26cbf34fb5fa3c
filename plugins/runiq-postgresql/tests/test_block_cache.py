"""The block cache: held blocks by term and table, least recently used out past the budget."""

from __future__ import annotations

from typing import Any

from runiq_postgresql.blockcache import BlockCache


def _block(block: int, term: str, postings: int) -> dict[str, Any]:
    return {
        "block": block,
        "term": term,
        "dead": False,
        "high": 0,
        "wide": False,
        "rows": b"\x00" * (4 * postings),
        "tfs": b"\x00" * postings,
        "lengths": b"\x00" * (2 * postings),
    }


def test_held_blocks_are_those_of_the_terms_and_table_asked_for() -> None:
    cache = BlockCache(1 << 20)
    cache.add(7, _block(1, "alpha", 10))
    cache.add(7, _block(2, "beta", 10))
    cache.add(8, _block(1, "alpha", 10))  # another postings table, same block id
    held = cache.held(7, ["alpha", "missing"])
    assert list(held) == [1]
    assert held[1]["term"] == "alpha"
    assert held[1]["rows"] == b"\x00" * 40
    assert cache.held(9, ["alpha", "beta"]) == {}
    assert set(cache.held(7, ["alpha", "beta"])) == {1, 2}


def test_the_least_recently_used_blocks_leave_first_and_held_copies_survive() -> None:
    cache = BlockCache(3 * (200 + 700))  # room for three blocks of 100 postings
    for block in range(3):
        cache.add(1, _block(block, f"t{block}", 100))
    pinned = cache.held(1, ["t0"])  # t0 is now the most recently used
    cache.add(1, _block(3, "t3", 100))
    assert cache.held(1, ["t1"]) == {}  # the least recently used went
    assert set(cache.held(1, ["t0", "t2", "t3"])) == {0, 2, 3}
    assert cache.size <= 3 * 900
    cache.add(1, _block(4, "t4", 250))  # bigger: evicts as many as needed
    assert pinned[0]["term"] == "t0"  # what a query already holds stays usable


def test_a_block_over_the_budget_is_not_kept() -> None:
    cache = BlockCache(1000)
    entry = cache.add(1, _block(1, "huge", 1000))
    assert entry["term"] == "huge"
    assert cache.held(1, ["huge"]) == {}
    assert cache.size == 0
