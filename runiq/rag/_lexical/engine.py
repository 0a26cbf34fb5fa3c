"""An incremental in-memory BM25 index over integer row ids, scored with vectorised numpy.

Each term has a :class:`~runiq.rag._lexical.postings.PostingList` (int32 rows, small integer
frequencies); each row has its length in an int32 array. Adding or removing a chunk touches only its
own terms, so a document replace costs what its text costs, whatever the index size; there is never a
rebuild. ``N`` and ``avgdl`` change on every write, so nothing per posting is stored precomputed: a
query gathers the lengths of each term's rows and evaluates
:func:`~runiq.rag._lexical.bm25.bm25_length_norm` and :func:`~runiq.rag._lexical.bm25.bm25_term_score`
over the whole posting list at once, accumulating into a dense float64 score array term by term in
query order, exactly as a per-posting loop would: results are exact BM25, not an approximation.

Between two writes a term's scores do not change, so they are remembered (float64, for at most half of
all postings) and a repeated term costs one ``add.at``; any write forgets them.

Writers must be exclusive; any number of readers may score concurrently between writes (the
in-memory store's readers-writer lock provides both). The score cache is the only state readers write.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from runiq.rag._lexical.analysed import AnalysedQuery, analyse_query
from runiq.rag._lexical.bm25 import BM25Parameters, bm25_idf, bm25_length_norm, bm25_term_score
from runiq.rag._lexical.postings import Part, PostingList
from runiq.rag._lexical.query import parse_lexical_query
from runiq.rag._lexical.selection import top_candidates
from runiq.rag._lexical.tokenizer import Analyzer

__all__ = ["BM25Index"]

_ABSENT = -1
_MIN_ROWS = 64
_GROWTH = 1.5
# At most this share of all postings keeps a cached float64 score (8 bytes each) between writes.
_CACHE_SHARE = 0.5

Scores = list[npt.NDArray[np.float64]]  # one array per posting-list part
Plan = list[tuple[str, PostingList, int]]  # (term, postings, query frequency), in query order


class BM25Index:
    def __init__(self, analyzer: Analyzer | None = None, parameters: BM25Parameters | None = None) -> None:
        self._analyzer = analyzer or Analyzer()
        self._params = parameters or BM25Parameters()
        self._postings: dict[str, PostingList] = {}
        self._lengths: npt.NDArray[np.int32] = np.full(0, _ABSENT, dtype=np.int32)
        # The length a norm is computed from: the row's length, but at least 1 (a row of length 0 holds
        # no posting, and a removed row only tombstones with tf 0): every norm is positive, so a
        # tombstone scores exactly 0.0, never 0/0.
        self._norm_lengths: npt.NDArray[np.int32] = np.ones(0, dtype=np.int32)
        self._extent = 0  # one past the highest row ever added: the length of a score array
        self._count = 0
        self._total_length = 0
        self._postings_held = 0  # live postings over all terms
        self._version = 0  # bumped by every write: keys the score cache
        self._cache: dict[str, tuple[int, Scores]] = {}
        self._cache_postings = 0
        self._cache_lock = threading.Lock()

    @property
    def analyzer(self) -> Analyzer:
        return self._analyzer

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held in numpy arrays (postings, lengths, cached scores), for memory benchmarks."""
        cached = sum(values.nbytes for _, parts in self._cache.values() for values in parts)
        rows = int(self._lengths.nbytes + self._norm_lengths.nbytes)
        return sum(p.nbytes for p in self._postings.values()) + rows + cached

    # -- writes --------------------------------------------------------------------------------

    def add(self, row: int, text: str) -> None:
        """Index ``text`` as ``row`` (replacing the row if it is indexed already)."""
        if self._length(row) != _ABSENT:
            self.remove(row)
        indexed = self._analyzer.indexed(text)
        self._reserve(row + 1)
        self._lengths[row] = indexed.length
        self._norm_lengths[row] = max(indexed.length, 1)
        self._extent = max(self._extent, row + 1)
        self._count += 1
        self._total_length += indexed.length
        self._postings_held += len(indexed.counts)
        self._changed()
        postings = self._postings
        for term, tf in indexed.counts.items():
            posting = postings.get(term)
            if posting is None:
                posting = postings[term] = PostingList()
            posting.add(row, tf)

    def remove_text(self, row: int, text: str) -> None:
        """Remove a row whose indexed text is known: touches only that text's terms."""
        self._forget(row, set(self._analyzer.terms(text)))

    def remove(self, row: int) -> None:
        """Remove a row without its text: visits every term (prefer :meth:`remove_text`)."""
        self._forget(row, list(self._postings))

    def _forget(self, row: int, terms: Iterable[str]) -> None:
        length = self._length(row)
        if length == _ABSENT:
            return
        self._lengths[row] = _ABSENT
        self._norm_lengths[row] = 1
        self._count -= 1
        self._total_length -= length
        self._changed()
        postings = self._postings
        for term in terms:
            posting = postings.get(term)
            if posting is not None and posting.remove(row):
                self._postings_held -= 1
                if not posting.frequency:
                    del postings[term]

    def _changed(self) -> None:
        self._version += 1
        if self._cache:
            self._cache.clear()
        self._cache_postings = 0

    def _length(self, row: int) -> int:
        return int(self._lengths[row]) if 0 <= row < self._lengths.shape[0] else _ABSENT

    def _reserve(self, needed: int) -> None:
        capacity = self._lengths.shape[0]
        if needed <= capacity:
            return
        size = max(_MIN_ROWS, needed, int(capacity * _GROWTH))
        lengths = np.full(size, _ABSENT, dtype=np.int32)
        lengths[:capacity] = self._lengths
        norm_lengths = np.ones(size, dtype=np.int32)
        norm_lengths[:capacity] = self._norm_lengths
        self._lengths, self._norm_lengths = lengths, norm_lengths

    # -- reads ---------------------------------------------------------------------------------

    def rows(self) -> npt.NDArray[np.int64]:
        """Every indexed row, ascending."""
        return np.flatnonzero(self._lengths[: self._extent] != _ABSENT)

    def rows_with_all(self, terms: Iterable[str]) -> npt.NDArray[np.int64]:
        """Rows (ascending) holding every one of ``terms`` (index terms, as the analyzer writes them);
        every row when there are none."""
        lists: list[npt.NDArray[np.int32]] = []
        for term in terms:
            posting = self._postings.get(term)
            if posting is None:
                return np.empty(0, dtype=np.int64)
            lists.append(posting.live_rows())
        if not lists:
            return self.rows()
        lists.sort(key=len)
        result = np.sort(lists[0])
        for rows in lists[1:]:
            result = np.intersect1d(result, rows, assume_unique=True)
        return result.astype(np.int64)

    def rows_with_fragment(self, fragment: str) -> npt.NDArray[np.int64]:
        """Rows (ascending) holding a term that contains ``fragment``: for an identifier fragment, exactly
        the rows with a word containing it (see :mod:`runiq.rag._lexical.fragments`). Scans the vocabulary."""
        lists = [posting.live_rows() for term, posting in self._postings.items() if fragment in term]
        if not lists:
            return np.empty(0, dtype=np.int64)
        return np.unique(np.concatenate(lists)).astype(np.int64)

    def score_rows(self, query: AnalysedQuery | str) -> npt.NDArray[np.float64]:
        """The query's score for every row (index = row; 0.0 where no query term occurs)."""
        return self._accumulate(self._plan(query))

    def top(
        self, query: AnalysedQuery | str, k: int, among: npt.NDArray[np.int64] | None = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """Every row's score and the rows that may be among the ``k`` best (``k`` best plus every row tied
        with the k-th; see :func:`~runiq.rag._lexical.selection.top_candidates`), within ``among``."""
        plan = self._plan(query)
        scores = self._accumulate(plan)
        frequent = [posting for _, posting, _ in plan if posting.frequency >= k]
        probe = min(frequent, key=lambda posting: posting.frequency).live_rows() if frequent else None
        return scores, top_candidates(scores, k, among, probe)

    def scores(self, query: AnalysedQuery | str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Rows with a positive score and their scores, by ascending row."""
        scores = self.score_rows(query)
        rows = np.flatnonzero(scores > 0.0)
        return rows, scores[rows]

    def _plan(self, query: AnalysedQuery | str) -> Plan:
        """The query's indexed terms in query order, with their postings and query frequencies. Text is
        analysed as a query would be (:func:`~runiq.rag._lexical.analysed.analyse_query`)."""
        if isinstance(query, str):
            query = analyse_query(parse_lexical_query(query), self._analyzer)
        postings = self._postings
        return [
            (term, postings[term], qtf)
            for term, qtf in zip(query.terms, query.weights, strict=True)
            if term in postings
        ]

    def _accumulate(self, plan: Plan) -> npt.NDArray[np.float64]:
        scores = np.zeros(self._extent, dtype=np.float64)
        version = self._version
        for term, posting, qtf in plan:
            parts = posting.parts()
            for (rows, _), values in zip(parts, self._term_scores(term, posting, parts, version), strict=True):
                np.add.at(scores, rows, values if qtf == 1 else values * qtf)
        return scores

    def _term_scores(self, term: str, posting: PostingList, parts: list[Part], version: int) -> Scores:
        """``bm25_term_score`` over the term's postings, remembered until the next write."""
        cached = self._cache.get(term)
        if cached is not None and cached[0] == version:
            return cached[1]
        idf = bm25_idf(self._count, posting.frequency)
        average = self._total_length / self._count if self._total_length else 1.0
        values = [
            bm25_term_score(idf, tfs, bm25_length_norm(self._norm_lengths[rows], average, self._params))
            for rows, tfs in parts
        ]
        self._remember(term, values, version)
        return values

    def _remember(self, term: str, values: Scores, version: int) -> None:
        size = sum(v.shape[0] for v in values)
        with self._cache_lock:  # concurrent readers may compute the same term; count it once
            if version != self._version or term in self._cache:
                return
            if self._cache_postings + size <= self._postings_held * _CACHE_SHARE:
                self._cache[term] = (version, values)
                self._cache_postings += size
