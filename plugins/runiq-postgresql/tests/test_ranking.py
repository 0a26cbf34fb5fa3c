"""BM25 summed from postings: the in-memory index's scores bit for bit, and batches that never split a tie."""

from __future__ import annotations

import math
import random
from collections import Counter
from typing import Any

import numpy as np

from runiq.rag._lexical import DEFAULT_ANALYZER, AnalysedQuery, BM25Index
from runiq_postgresql.lexical import slice_terms
from runiq_postgresql.postings import COLUMNS, Blocks, PostingsBuffer, gather
from runiq_postgresql.ranking import Candidates, batches, ranked, score

WORDS = ["remote", "work", "policy", "travel", "expense", "receipt", "hybrid", "index", "the", "of", "POL-HR-014"]


def _records(blocks: Blocks) -> list[dict[str, Any]]:
    return [dict(zip(COLUMNS, values, strict=True)) for values in blocks.records()]


def _tombstone(term: str, rows: list[int]) -> dict[str, Any]:
    data = b"".join(row.to_bytes(4, "big") for row in rows)
    return {"term": term, "dead": True, "high": 0, "wide": False, "rows": data, "tfs": None}


def _in_memory(texts: list[str], rows: list[int], query: AnalysedQuery, dead: set[int]) -> dict[int, float]:
    """What the in-memory index scores for the same chunks (under their row ids), deleted rows left out."""
    index = BM25Index(DEFAULT_ANALYZER)  # the analyzer slice_terms uses
    for row, text in zip(rows, texts, strict=True):
        index.add(row, text)
    held, values = index.scores(query)
    return {row: value for row, value in zip(held.tolist(), values.tolist(), strict=True) if row not in dead}


def _analysed(words: list[str]) -> AnalysedQuery:
    counts = Counter(words)
    return AnalysedQuery(terms=tuple(counts), weights=tuple(counts.values()))


def test_scores_are_the_in_memory_index_bit_for_bit() -> None:
    """The core's formula over the postings, summed in query order: exactly the in-memory scores."""
    rng = random.Random(3)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    rows = [5 + 3 * i for i in range(len(texts))]
    terms = slice_terms(texts)
    buffer = PostingsBuffer()
    buffer.add(terms.postings, rows, terms.term_counts)
    records = [*_records(buffer.blocks()), _tombstone("policy", [rows[4]]), _tombstone("remote", [rows[4]])]
    df = terms.frequencies
    for _ in range(30):
        query = _analysed([rng.choice(WORDS[:8]).lower() for _ in range(rng.randint(1, 6))])
        frequencies = {t: q for t, q in zip(query.terms, query.weights, strict=True) if df[t]}
        got = score(gather(records, list(frequencies)), frequencies, len(texts), sum(terms.term_counts), df)
        # The in-memory index still holds row 4 here, so N and df agree with the statistics used above.
        expected = _in_memory(texts, rows, query, dead={rows[4]})
        assert dict(zip(got.rows.tolist(), got.scores.tolist(), strict=True)) == expected  # exact floats


def test_sparse_row_ids_are_summed_the_same_way() -> None:
    """Row ids far apart (many deletions) take the sorting path; the sums do not change."""
    texts = ["remote work", "work policy", "remote remote policy"]
    terms = slice_terms(texts)
    frequencies = {"remote": 2, "work": 1, "policy": 1}
    results = []
    for rows in ([1, 2, 3], [1, 10**9, 2 * 10**9]):
        buffer = PostingsBuffer()
        buffer.add(terms.postings, rows, terms.term_counts)
        postings = gather(_records(buffer.blocks()), list(frequencies))
        got = score(postings, frequencies, 3, sum(terms.term_counts), terms.frequencies)
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


def test_contributions_are_remembered_per_statistics_and_recomputed_when_they_change() -> None:
    """A lexeme read again with the same N, df and total length reuses its contributions; new
    statistics (a write happened) give the scores a fresh read would."""
    texts = ["remote work", "work policy", "remote remote policy", "travel"]
    terms = slice_terms(texts)
    buffer = PostingsBuffer()
    buffer.add(terms.postings, [1, 2, 3, 4], terms.term_counts)
    records = _records(buffer.blocks())
    frequencies = {"remote": 1, "work": 2}
    held = gather(records, list(frequencies))
    stats = (4, sum(terms.term_counts), terms.frequencies)
    first = score(held, frequencies, *stats)
    memo = held.postings[0].memo
    assert memo is not None
    again = score(held, frequencies, *stats)
    assert held.postings[0].memo is memo
    assert again.scores.tolist() == first.scores.tolist()
    changed = (5, sum(terms.term_counts) + 7, {**terms.frequencies, "work": 3})
    reused = score(held, frequencies, *changed)
    fresh = score(gather(records, list(frequencies)), frequencies, *changed)
    assert held.postings[0].memo is not memo
    assert reused.rows.tolist() == fresh.rows.tolist()
    assert reused.scores.tolist() == fresh.scores.tolist()
    assert reused.scores.tolist() != first.scores.tolist()


def test_the_kth_best_score_is_exact_through_the_sample() -> None:
    """Many candidates take the sampled path; the batch cut is the exact k-th best score, ties included."""
    rng = np.random.default_rng(11)
    scores = np.round(rng.random(20_000) * 5, 3)  # many ties
    candidates = Candidates(np.arange(len(scores), dtype=np.int64), scores)
    for first in (1, 10, 44, 200):
        batch = next(batches(candidates, first))
        kth = float(np.sort(scores)[-first])
        assert batch.floor == float(np.round(kth, 9))
        assert sorted(batch.rows) == np.flatnonzero(scores >= kth - 2e-9).tolist()


def test_ranked_gives_the_batches_of_the_scored_candidates() -> None:
    """The store's path (the first batch cut from the summed scores) and batches over every candidate agree,
    batch for batch, with deleted rows, repeated query terms and ties (few words: many equal scores)."""
    rng = random.Random(8)
    texts = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 12))) for _ in range(3000)]
    rows = [2 + i for i in range(len(texts))]
    terms = slice_terms(texts)
    buffer = PostingsBuffer()
    buffer.add(terms.postings, rows, terms.term_counts)
    records = [*_records(buffer.blocks()), _tombstone("policy", rows[10:40]), _tombstone("work", rows[10:40])]
    df = terms.frequencies
    for first in (1, 3, 14, 5000):
        query = _analysed([rng.choice(WORDS[:8]).lower() for _ in range(rng.randint(1, 6))])
        frequencies = {t: q for t, q in zip(query.terms, query.weights, strict=True) if df[t]}
        stats = (len(texts), sum(terms.term_counts), df)
        expected = list(batches(score(gather(records, list(frequencies)), frequencies, *stats), first))
        assert list(ranked(gather(records, list(frequencies)), frequencies, *stats, first)) == expected


def test_postings_that_may_not_keep_contributions_are_scored_the_same() -> None:
    texts = ["remote work", "work policy", "remote remote policy"]
    terms = slice_terms(texts)
    buffer = PostingsBuffer()
    buffer.add(terms.postings, [1, 2, 3], terms.term_counts)
    frequencies = {"remote": 1, "policy": 1}
    stats = (3, sum(terms.term_counts), terms.frequencies)
    held = gather(_records(buffer.blocks()), list(frequencies))
    for postings in held.postings:
        postings.memoise = False
    expected = score(gather(_records(buffer.blocks()), list(frequencies)), frequencies, *stats)
    got = score(held, frequencies, *stats)
    assert all(postings.memo is None for postings in held.postings)
    assert got.scores.tolist() == expected.scores.tolist()


def test_ranked_makes_one_batch_of_exactly_first_candidates() -> None:
    texts = ["remote work"] * 3 + ["travel"] * 200
    terms = slice_terms(texts)
    buffer = PostingsBuffer()
    buffer.add(terms.postings, list(range(1, 204)), terms.term_counts)
    frequencies = {"remote": 1}
    stats = (len(texts), sum(terms.term_counts), terms.frequencies)
    got = list(ranked(gather(_records(buffer.blocks()), ["remote"]), frequencies, *stats, 3))
    assert [(b.rows, b.floor) for b in got] == [([1, 2, 3], -math.inf)]
