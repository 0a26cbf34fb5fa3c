"""Exact BM25 over the query terms' postings, summed with numpy, and the top k cut in batches.

The formula is the core's (:mod:`runiq.rag._lexical.bm25`: :func:`bm25_idf`, :func:`bm25_length_norm`,
:func:`bm25_term_score`, the default :class:`BM25Parameters`), evaluated over each term's postings as
the in-memory index evaluates it, times the query frequency when the query repeats the term, and
summed per chunk in query-term order with ``np.add.at`` (as in memory), so every score equals the
in-memory store's bit for bit. N, df and the total length come from the statistics read in the same
snapshot as the postings, so scores are exact whatever was written since a block was built. A term's
contributions depend on those statistics only, so they are remembered on its cached postings and
reused until a write changes them (the in-memory index does the same between writes).

Ranking is by score rounded to nine decimals, then ``(document_id, chunk_id)``: identities live in
the chunk table, so the store hands candidates to the server in batches of descending score
(:func:`batches`; :func:`ranked` cuts the first one straight from the summed scores), which orders
them and keeps the best k, until the top k is settled. Every score that rounds at or above a batch's
``floor`` is in that batch or an earlier one, so results at or above the floor have been ranked
against every candidate they can tie with.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from runiq.rag.providers import BM25Parameters, bm25_idf, bm25_length_norm, bm25_term_score
from runiq_postgresql.postings import Gathered, TermPostings

__all__ = ["BM25", "BM25_B", "BM25_K1", "Batch", "Candidates", "batches", "ranked", "score"]

BM25 = BM25Parameters()  # the phrase SQL (``queries``) writes the same k1 and b
BM25_K1 = BM25.k1
BM25_B = BM25.b
_TIE_MARGIN = 2e-9  # two scores with equal nine-decimal rounding differ by less than 1e-9
_SAMPLE_ABOVE = 64  # the k-th best of more than 64k scores is found through a sample (``_kth_best``)
_DENSE_SPAN_PER_POSTING = 4  # a dense accumulator is used while the row-id span is at most this per posting


@dataclass(frozen=True, slots=True)
class Candidates:
    """Chunks with a positive score (row ids and scores, unordered)."""

    rows: npt.NDArray[np.int64]
    scores: npt.NDArray[np.float64]

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(frozen=True, slots=True)
class Batch:
    """Candidates to fetch next, with their scores rounded to nine decimals (the ranking key); results
    whose rounded score is at least ``floor`` are final once fetched."""

    rows: list[int]
    scores: list[float]
    rounded: list[float]
    floor: float


def score(
    postings: Gathered, frequencies: Mapping[str, int], chunk_count: int, total_terms: int, dfs: Mapping[str, int]
) -> Candidates:
    """Sum the BM25 contributions per chunk, term by term in ``postings`` order (query order).

    ``frequencies`` holds each term's query frequency, ``dfs`` its document frequency. A term's
    contributions depend on N, df and the total length only, so they are remembered on its postings
    (``TermPostings.memo``) and a query that finds the same statistics reuses them.
    """
    summed = _summed(postings, frequencies, chunk_count, total_terms, dfs)
    return summed if isinstance(summed, Candidates) else summed.candidates()


def ranked(
    postings: Gathered,
    frequencies: Mapping[str, int],
    chunk_count: int,
    total_terms: int,
    dfs: Mapping[str, int],
    first: int,
) -> Iterator[Batch]:
    """``batches(score(...), first)``; the first batch is cut from the summed scores directly, and every
    candidate is listed only if a second batch is asked for."""
    summed = _summed(postings, frequencies, chunk_count, total_terms, dfs)
    size = max(first, 1)
    if isinstance(summed, _Dense) and len(summed.sums) > size:
        sums = summed.sums
        x = _kth_best(sums, size)  # every candidate (score > 0) is above the rows without one
        if x > 0.0:  # else at most ``size`` candidates: one batch
            cut = x - max(_TIE_MARGIN, abs(x) * 1e-12)
            hit = np.flatnonzero(sums >= cut) if cut > 0.0 else np.flatnonzero(sums > 0.0)
            if len(hit) > size or np.count_nonzero(sums > 0.0) > size:  # else exactly ``size``: one batch
                scores = sums[hit]
                rows = hit + summed.low if summed.low else hit
                yield Batch(rows.tolist(), scores.tolist(), np.round(scores, 9).tolist(), float(np.round(x, 9)))
                yield from _batches(summed.candidates(), size * 4, cut)
                return
    yield from batches(summed if isinstance(summed, Candidates) else summed.candidates(), first)


@dataclass(frozen=True, slots=True)
class _Dense:
    """Every row's summed score (row ``low + i`` has ``sums[i]``); the positive ones are the candidates."""

    sums: npt.NDArray[np.float64]
    low: int

    def candidates(self) -> Candidates:
        hit = np.flatnonzero(self.sums > 0.0)
        return Candidates(hit + self.low if self.low else hit, self.sums[hit])


def _summed(
    postings: Gathered, frequencies: Mapping[str, int], chunk_count: int, total_terms: int, dfs: Mapping[str, int]
) -> Candidates | _Dense:
    if not postings.terms or chunk_count <= 0:
        return Candidates(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))
    avgdl = total_terms / chunk_count if total_terms else 1.0
    parts = []
    for term, held in zip(postings.terms, postings.postings, strict=True):
        values = _contributions(held, chunk_count, dfs[term], total_terms, avgdl)
        qtf = frequencies[term]
        parts.append((held, values if qtf == 1 else values * qtf))
    return _added(parts, postings.dead)


def _contributions(
    postings: TermPostings, chunk_count: int, df: int, total_terms: int, avgdl: float
) -> npt.NDArray[np.float64]:
    """``bm25_term_score`` over a term's live postings, remembered for these statistics."""
    key = (chunk_count, df, total_terms)
    memo = postings.memo  # one read: a concurrent scorer may replace it
    if memo is not None and memo[0] == key:
        return memo[1]
    tfs = np.add(postings.tfs, 1.0)
    values = bm25_term_score(bm25_idf(chunk_count, df), tfs, bm25_length_norm(postings.lengths, avgdl, BM25))
    if postings.memoise:
        postings.memo = (key, values)
    return values


def _added(
    parts: list[tuple[TermPostings, npt.NDArray[np.float64]]], dead: npt.NDArray[np.int64]
) -> Candidates | _Dense:
    """Per-row sums, adding the terms' contributions in ``parts`` order (``np.add.at`` and ``np.bincount``
    both add in input order, as the in-memory index's ``np.add.at`` does)."""
    held = [(p.rows, values, p.bounds) for p, values in parts if len(p.rows)]
    if not held:
        return Candidates(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))
    low = min(bounds[0] for _, _, bounds in held)
    span = max(bounds[1] for _, _, bounds in held) - low + 1
    if span <= _DENSE_SPAN_PER_POSTING * sum(len(rows) for rows, _, _ in held) + 1024:
        shift = low > span  # a dense accumulator from row 0 would be mostly empty: shift the rows
        if not shift:
            low, span = 0, span + low
        sums = np.zeros(span, dtype=np.float64)
        for rows, values, _ in held:
            np.add.at(sums, rows - low if shift else rows, values)
        dead = dead[(dead >= low) & (dead < low + span)]
        sums[dead - low] = 0.0
        return _Dense(sums, low)
    # sparse row ids (many deletions): sort instead
    ids, slots = np.unique(np.concatenate([rows.astype(np.int64) for rows, _, _ in held]), return_inverse=True)
    sums = np.bincount(slots, np.concatenate([values for _, values, _ in held])).astype(np.float64, copy=False)
    sums[np.isin(ids, dead)] = 0.0
    hit = np.flatnonzero(sums > 0.0)
    return Candidates(ids[hit], sums[hit])


def batches(candidates: Candidates, first: int) -> Iterator[Batch]:
    """Candidates in descending score: about ``first``, then four times as many each time, then the rest.

    A batch cut below the ``size``-th best score ``x`` takes every candidate above ``x - 2e-9``: all
    scores that round (to nine decimals) to at least ``round(x, 9)`` are in it or an earlier batch, so
    results at or above that ``floor`` are ranked against everything that can tie with them.
    """
    yield from _batches(candidates, max(first, 1), math.inf)


def _batches(candidates: Candidates, size: int, above: float) -> Iterator[Batch]:
    """The batches of the candidates scoring below ``above``, the first about ``size`` long."""
    scores = candidates.scores
    left = scores if above == math.inf else scores[scores < above]  # the candidates not yet in a batch
    while True:
        if size >= len(left):
            yield _batch(candidates, None if above == math.inf else scores < above, -math.inf)
            return
        x = _kth_best(left, size)
        cut = x - max(_TIE_MARGIN, abs(x) * 1e-12)
        mask = scores >= cut if above == math.inf else (scores >= cut) & (scores < above)
        yield _batch(candidates, mask, float(np.round(x, 9)))
        above, size = cut, size * 4
        left = scores[scores < above]


def _kth_best(values: npt.NDArray[np.float64], k: int) -> float:
    """The ``k``-th largest of ``values`` (more than ``k`` of them).

    Over many values a strided sample is partitioned first: its k-th best is at most the k-th best of
    all, so the values at or above it hold the k best, and only those (about 1/16 of all) are partitioned.
    """
    n = len(values)
    if n > _SAMPLE_ABOVE * k:
        sample = values[:: n // (16 * k)]
        values = values[values >= np.partition(sample, len(sample) - k)[len(sample) - k]]
        n = len(values)
    return float(np.partition(values, n - k)[n - k])


def _batch(candidates: Candidates, mask: npt.NDArray[np.bool_] | None, floor: float) -> Batch:
    rows, scores = (
        (candidates.rows, candidates.scores) if mask is None else (candidates.rows[mask], candidates.scores[mask])
    )
    return Batch(rows.tolist(), scores.tolist(), np.round(scores, 9).tolist(), floor)
