"""The postings block format: what is written reads back, blocks concatenate, purges drop the dead."""

from __future__ import annotations

import random
from typing import Any

import numpy as np

from runiq_postgresql.lexical import slice_terms
from runiq_postgresql.postings import Blocks, PostingsBuffer, gather, purged


def _records(blocks: Blocks, *, start: int = 1) -> list[dict[str, Any]]:
    """Blocks as the table returns them (live blocks)."""
    return [
        {
            "block": start + i,
            "term": term,
            "dead": False,
            "high": high,
            "wide": wide,
            "rows": rows,
            "tfs": tfs,
            "lengths": lengths,
        }
        for i, (term, _, high, wide, _, rows, tfs, lengths) in enumerate(blocks.records())
    ]


def _tombstone(term: str, rows: list[int]) -> dict[str, Any]:
    high = rows[0] >> 32
    data = b"".join((row & 0xFFFFFFFF).to_bytes(4, "big") for row in rows)
    return {"block": 999, "term": term, "dead": True, "high": high, "wide": False, "rows": data, "tfs": None}


def _expected(texts: list[str], row_ids: list[int], lengths: list[int]) -> dict[str, list[tuple[int, int, int]]]:
    """(row, tf, length) per lexeme, straight from the per-chunk terms."""
    terms = slice_terms(texts)
    out: dict[str, list[tuple[int, int, int]]] = {}
    p = terms.postings
    for i, term in enumerate(p.terms):
        for j in range(int(p.starts[i]), int(p.starts[i + 1])):
            chunk = int(p.chunks[j])
            out.setdefault(term, []).append((row_ids[chunk], int(p.tfs[j]), lengths[chunk]))
    return out


def _read(records: list[dict[str, Any]], terms: list[str]) -> dict[str, list[tuple[int, int, int]]]:
    g = gather(records, terms)
    out: dict[str, list[tuple[int, int, int]]] = {}
    for term, start, stop in zip(g.terms, g.starts, g.starts[1:], strict=False):
        out[term] = sorted(
            (int(r), int(t), int(n))
            for r, t, n in zip(g.rows[start:stop], g.tfs[start:stop], g.lengths[start:stop], strict=True)
        )
    return out


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "CS1503", "pol-hr-014", "the", "of"]
    return [" ".join(rng.choice(words) for _ in range(rng.randint(0, 30))) for _ in range(n)]


def test_written_postings_read_back_per_lexeme_including_row_ids_past_32_bits_and_long_chunks() -> None:
    """Row ids on both sides of 2**32 and lengths past 65,535 land in their own blocks and decode exactly."""
    texts = _texts(1, 40)
    row_ids = [2**32 - 20 + 2 * i for i in range(40)]  # the first ten below 2**32, the rest above
    lengths = [70_000 if i % 7 == 0 else len(t.split()) for i, t in enumerate(texts)]
    buffer = PostingsBuffer()
    buffer.add(slice_terms(texts).postings, row_ids, lengths)
    blocks = buffer.blocks()
    kinds = set(zip(blocks.high, blocks.wide, strict=True))
    assert kinds == {(0, False), (0, True), (1, False), (1, True)}
    expected = _expected(texts, row_ids, lengths)
    assert _read(_records(blocks), list(expected)) == {t: sorted(v) for t, v in expected.items()}


def test_runs_of_one_write_become_one_block_per_lexeme() -> None:
    texts = _texts(2, 30)
    buffer = PostingsBuffer()
    buffer.add(slice_terms(texts[:10]).postings, list(range(1, 11)), [5] * 10)
    buffer.add(slice_terms(texts[10:]).postings, list(range(11, 31)), [5] * 20)
    blocks = buffer.blocks()
    assert len(blocks.terms) == len(set(blocks.terms))
    assert sorted(blocks.terms) == sorted(buffer.terms)
    assert sum(blocks.sizes) == sum(len(set(slice_terms([t]).postings.terms)) for t in texts)


def test_blocks_of_a_lexeme_concatenate_bytewise_into_one_valid_block() -> None:
    """What the SQL merge (``string_agg`` per column) relies on."""
    first, second = PostingsBuffer(), PostingsBuffer()
    first.add(slice_terms(["alpha beta", "alpha"]).postings, [1, 2], [2, 1])
    second.add(slice_terms(["alpha alpha gamma"]).postings, [3], [3])
    records = {r["term"]: r for r in _records(first.blocks())}
    other = {r["term"]: r for r in _records(second.blocks())}
    merged = dict(records["alpha"])
    for column in ("rows", "tfs", "lengths"):
        merged[column] = records["alpha"][column] + other["alpha"][column]
    assert _read([merged], ["alpha"]) == {"alpha": [(1, 1, 2), (2, 1, 1), (3, 2, 3)]}


def test_gather_follows_the_requested_term_order_and_collects_tombstones() -> None:
    buffer = PostingsBuffer()
    buffer.add(slice_terms(["alpha beta", "beta gamma"]).postings, [7, 8], [2, 2])
    records = [*_records(buffer.blocks()), _tombstone("beta", [8]), _tombstone("gamma", [8])]
    g = gather(records, ["gamma", "missing", "beta"])
    assert g.terms == ["gamma", "beta"]
    assert g.starts == [0, 1, 3]
    assert g.rows.tolist() == [8, 7, 8]
    assert sorted(g.dead.tolist()) == [8, 8]


def test_purge_drops_tombstoned_postings_and_lexemes_left_empty() -> None:
    texts = ["alpha beta", "alpha", "beta gamma", "gamma"]
    buffer = PostingsBuffer()
    buffer.add(slice_terms(texts).postings, [10, 11, 2**32 + 12, 13], [2, 1, 2, 1])
    records = [*_records(buffer.blocks()), _tombstone("alpha", [11]), _tombstone("beta", [10, 2**32 + 12])]
    records.append(_tombstone("beta", [2**32 + 12]))
    fresh = purged(records)
    assert not any(r["dead"] for r in _records(fresh))
    assert _read(_records(fresh), ["alpha", "beta", "gamma"]) == {
        "alpha": [(10, 1, 2)],
        "gamma": [(13, 1, 1), (2**32 + 12, 1, 2)],
    }


def test_an_empty_write_has_no_blocks() -> None:
    buffer = PostingsBuffer()
    buffer.add(slice_terms(["", "   "]).postings, [1, 2], [0, 0])
    assert len(buffer.blocks()) == 0
    assert len(PostingsBuffer().blocks()) == 0
    assert np.array_equal(gather([], ["x"]).rows, np.empty(0, dtype=np.int64))
