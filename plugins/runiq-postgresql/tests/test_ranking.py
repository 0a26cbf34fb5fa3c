"""BM25 summed from postings: the in-memory formula bit for bit, and batches that never split a tie."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

import numpy as np

from runiq_postgresql.lexical import slice_terms
from runiq_postgresql.postings import Blocks, PostingsBuffer, gather
from runiq_postgresql.ranking import BM25_B, BM25_K1, Candidates, batches, idf, score

WORDS = ["remote", "work", "policy", "travel", "expense", "receipt", "hybrid", "index", "the", "of", "POL-HR-014"]


def _records(blocks: Blocks) -> list[dict[str, Any]]:
    names = ("term", "high", "wide", "size", "rows", "tfs", "lengths")
    return [dict(zip(names, values, strict=True), dead=False) for values in zip(*blocks.arguments(), strict=True)]


def _tombstone(term: str, rows: list[int]) -> dict[str, Any]:
    data = b"".join(row.to_bytes(4, "big") for row in rows)
    return {"term": term, "dead": True, "high": 0, "wide": False, "rows": data, "tfs": None}


def _reference(texts: list[str], rows: list[int], query: list[str], dead: set[int]) -> dict[int, float]:
    """The in-memory index's loop: per term in query order, ``acc[row] += idf * tf / (tf + norm)``."""
    terms = slice_terms(texts)
    n, total = len(texts), sum(terms.term_counts)
    avgdl = total / n if total else 1.0
    tf_of: list[dict[str, int]] = [{} for _ in texts]
    for i, term in enumerate(terms.postings.terms):
        for j in range(int(terms.postings.starts[i]), int(terms.postings.starts[i + 1])):
            tf_of[int(terms.postings.chunks[j])][term] = int(terms.postings.tfs[j])
    acc: dict[int, float] = {}
    for term, qtf in Counter(query).items():
        holders = [c for c in range(len(texts)) if term in tf_of[c]]
        if not holders:
            continue
        weight = math.log(1.0 + (n - len(holders) + 0.5) / (len(holders) + 0.5)) * qtf
        for c in holders:
            tf = tf_of[c][term]
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * terms.term_counts[c] / avgdl)
            acc[rows[c]] = acc.get(rows[c], 0.0) + weight * tf / (tf + norm)
    return {row: s for row, s in acc.items() if row not in dead}


def test_scores_are_the_in_memory_formula_bit_for_bit() -> None:
    rng = random.Random(3)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    rows = [5 + 3 * i for i in range(len(texts))]
    terms = slice_terms(texts)
    buffer = PostingsBuffer()
    buffer.add(terms.postings, rows, terms.term_counts)
    records = [*_records(buffer.blocks()), _tombstone("policy", [rows[4]]), _tombstone("remote", [rows[4]])]
    df = terms.frequencies
    for _ in range(30):
        query = [rng.choice(WORDS[:8]) for _ in range(rng.randint(1, 6))]
        weights = {t: idf(len(texts), df[t], q) for t, q in Counter(query).items() if df[t]}
        got = score(gather(records, list(weights)), weights, len(texts), sum(terms.term_counts))
        expected = _reference(texts, rows, query, dead={rows[4]})
        assert dict(zip(got.rows.tolist(), got.scores.tolist(), strict=True)) == expected  # exact floats


def test_sparse_row_ids_are_summed_the_same_way() -> None:
    """Row ids far apart (many deletions) take the sorting path; the sums do not change."""
    texts = ["remote work", "work policy", "remote remote policy"]
    terms = slice_terms(texts)
    weights = {"remote": 1.25, "work": 0.5, "policy": 2.0}
    results = []
    for rows in ([1, 2, 3], [1, 10**9, 2 * 10**9]):
        buffer = PostingsBuffer()
        buffer.add(terms.postings, rows, terms.term_counts)
        got = score(gather(_records(buffer.blocks()), list(weights)), weights, 3, sum(terms.term_counts))
        results.append(sorted(got.scores.tolist()))
    assert results[0] == results[1]


def _drain(candidates: Candidates, first: int) -> list[tuple[list[int], float]]:
    return [(b.rows, b.floor) for b in batches(candidates, first)]


def test_batches_cover_every_candidate_once_best_first_without_splitting_ties() -> None:
    rng = np.random.default_rng(5)
    base = rng.choice([1.0, 2.0, 2.5, 3.0, 7.0], size=400)
    scores = base + rng.choice([0.0, 1e-10, -3e-10, 4e-10], size=400)  # ties to nine decimals
    candidates = Candidates(np.arange(400, dtype=np.int64), scores)
    seen: list[int] = []
    previous_min = math.inf
    for rows, floor in _drain(candidates, 3):
        assert rows, "no empty batch"
        values = scores[rows]
        assert values.max() < previous_min  # strictly below everything fetched before
        previous_min = values.min()
        # Every candidate that rounds to at least the floor is in this batch or an earlier one.
        settled = set(np.flatnonzero(np.round(scores, 9) >= floor).tolist()) if floor > -math.inf else set()
        assert settled <= set(seen) | set(rows)
        seen.extend(rows)
    assert sorted(seen) == list(range(400))


def test_a_single_batch_when_there_are_few_candidates() -> None:
    candidates = Candidates(np.array([4, 9], dtype=np.int64), np.array([1.5, 0.5]))
    assert _drain(candidates, 10) == [([4, 9], -math.inf)]
    assert _drain(Candidates(np.empty(0, dtype=np.int64), np.empty(0)), 10) == [([], -math.inf)]
