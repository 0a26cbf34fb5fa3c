"""An incremental in-memory BM25 index over integer row ids, scored with vectorised numpy.

Each term has a :class:`~runiq.rag.lexical.postings.PostingList` (int32 rows, small integer
frequencies); each row has its length in an int32 array. Adding or removing a chunk touches only its
own terms, so a document replace costs what its text costs, whatever the index size; there is never a
rebuild. ``N`` and ``avgdl`` change on every write, so nothing per posting is precomputed: a query
gathers each term's rows' length norms (one float64 array per index, recomputed on the first query
after a write), evaluates :func:`~runiq.rag.lexical.bm25.bm25_term_score` over the whole posting
list at once and accumulates into a dense score array. Scores are float64 and summed term by term in
query order, exactly as a per-posting loop would sum them: results are exact BM25, not an
approximation.

Writers must be exclusive; any number of readers may score concurrently between writes (the
in-memory store's readers-writer lock provides both). The norm cache is the only state a reader
writes, and it is replaced whole.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from runiq.rag.lexical.bm25 import BM25Parameters, bm25_idf, bm25_length_norm, bm25_term_score
from runiq.rag.lexical.postings import PostingList
from runiq.rag.lexical.query import MAX_QUERY_TERMS
from runiq.rag.lexical.selection import top_candidates
from runiq.rag.lexical.tokenizer import Analyzer

__all__ = ["BM25Index"]

_ABSENT = -1
_MIN_ROWS = 64
_GROWTH = 1.5
# At most this share of all postings keeps a cached float64 contribution (8 bytes each) between writes.
_CACHE_SHARE = 0.5


class BM25Index:
    def __init__(self, analyzer: Analyzer | None = None, parameters: BM25Parameters | None = None) -> None:
        self._analyzer = analyzer or Analyzer()
        self._params = parameters or BM25Parameters()
        self._postings: dict[str, PostingList] = {}
        self._lengths: npt.NDArray[np.int32] = np.full(0, _ABSENT, dtype=np.int32)
        self._extent = 0  # one past the highest row ever added: the length of a score array
        self._count = 0
        self._total_length = 0
        self._postings_held = 0  # live postings over all terms
        self._version = 0  # bumped by every write: keys the caches below
        self._norms: tuple[int, npt.NDArray[np.float64]] | None = None
        self._cache: dict[str, tuple[int, npt.NDArray[np.float64]]] = {}
        self._cache_postings = 0
        self._cache_lock = threading.Lock()

    @property
    def analyzer(self) -> Analyzer:
        return self._analyzer

    def __len__(self) -> int:
        return self._count

    @property
    def nbytes(self) -> int:
        """Bytes held in numpy arrays (postings, lengths, the norm cache), for memory benchmarks."""
        norms = 0 if self._norms is None else self._norms[1].nbytes
        cached = sum(values.nbytes for _, values in self._cache.values())
        return sum(p.nbytes for p in self._postings.values()) + int(self._lengths.nbytes) + norms + cached

    # -- writes --------------------------------------------------------------------------------

    def add(self, row: int, text: str) -> None:
        """Index ``text`` as ``row`` (replacing the row if it is indexed already)."""
        if self._length(row) != _ABSENT:
            self.remove(row)
        indexed = self._analyzer.indexed(text)
        self._reserve(row + 1)
        self._lengths[row] = indexed.length
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
        grown = np.full(max(_MIN_ROWS, needed, int(capacity * _GROWTH)), _ABSENT, dtype=np.int32)
        grown[:capacity] = self._lengths
        self._lengths = grown

    # -- reads ---------------------------------------------------------------------------------

    def rows(self) -> npt.NDArray[np.int64]:
        """Every indexed row, ascending."""
        return np.flatnonzero(self._lengths[: self._extent] != _ABSENT)

    def rows_with_all(self, words: Iterable[str]) -> npt.NDArray[np.int64] | None:
        """Rows (ascending) holding every term of ``words``, or ``None`` when the words have no terms."""
        lists: list[npt.NDArray[np.int32]] = []
        for word in words:
            for term in self._analyzer.terms(word):
                posting = self._postings.get(term)
                if posting is None:
                    return np.empty(0, dtype=np.int64)
                lists.append(posting.live_rows())
        if not lists:
            return None
        lists.sort(key=len)
        result = lists[0]
        for rows in lists[1:]:
            result = np.intersect1d(result, rows, assume_unique=True)
        return result.astype(np.int64)

    def score_rows(self, text: str) -> npt.NDArray[np.float64]:
        """The query's score for every row (index = row; 0.0 where no query term occurs)."""
        return self._accumulate(self._plan(text))

    def top(
        self, text: str, k: int, among: npt.NDArray[np.int64] | None = None
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
        """Every row's score and the rows that may be among the ``k`` best (``k`` best plus every row tied
        with the k-th; see :func:`~runiq.rag.lexical.selection.top_candidates`), within ``among``."""
        plan = self._plan(text)
        scores = self._accumulate(plan)
        frequent = [posting for _, posting, _ in plan if posting.frequency >= k]
        probe = min(frequent, key=lambda posting: posting.frequency).live_rows() if frequent else None
        return scores, top_candidates(scores, k, among, probe)

    def _plan(self, text: str) -> list[tuple[str, PostingList, int]]:
        """The query's indexed terms in query order, with their postings and query frequencies."""
        terms = self._analyzer.query_terms(text)[:MAX_QUERY_TERMS]
        postings = self._postings
        return [(term, postings[term], qtf) for term, qtf in Counter(terms).items() if term in postings]

    def _accumulate(self, plan: list[tuple[str, PostingList, int]]) -> npt.NDArray[np.float64]:
        scores = np.zeros(self._extent, dtype=np.float64)
        if not plan:
            return scores
        version = self._version
        norms = self._current_norms(version)
        for term, posting, qtf in plan:
            rows, _ = posting.arrays()
            np.add.at(scores, rows, self._contributions(term, posting, qtf, norms, version))
        return scores

    def _contributions(
        self, term: str, posting: PostingList, qtf: int, norms: npt.NDArray[np.float64], version: int
    ) -> npt.NDArray[np.float64]:
        """``qtf * bm25_term_score`` over the term's postings; the score is remembered until the next write."""
        cached = self._cache.get(term)
        if cached is not None and cached[0] == version:
            values = cached[1]
        else:
            rows, tfs = posting.arrays()
            values = bm25_term_score(bm25_idf(self._count, posting.frequency), tfs, norms[rows])
            self._remember(term, values, version)
        return values if qtf == 1 else values * qtf

    def _remember(self, term: str, values: npt.NDArray[np.float64], version: int) -> None:
        size = values.shape[0]
        with self._cache_lock:  # concurrent readers may compute the same term; count it once
            if version != self._version or term in self._cache:
                return
            if self._cache_postings + size <= self._postings_held * _CACHE_SHARE:
                self._cache[term] = (version, values)
                self._cache_postings += size

    def scores(self, text: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Rows with a positive score and their scores, by ascending row."""
        scores = self.score_rows(text)
        rows = np.flatnonzero(scores > 0.0)
        return rows, scores[rows]

    def _current_norms(self, version: int) -> npt.NDArray[np.float64]:
        cached = self._norms
        if cached is not None and cached[0] == version:
            return cached[1]
        average = self._total_length / self._count if self._total_length else 1.0
        # A row of length 0 holds no posting, and a removed row only tombstones (tf 0); a length of at
        # least 1 keeps every norm positive, so a tombstone scores exactly 0.0 and never 0/0.
        lengths = np.maximum(self._lengths[: self._extent], 1).astype(np.float64)
        norms = bm25_length_norm(lengths, average, self._params)
        self._norms = (version, norms)
        return norms
