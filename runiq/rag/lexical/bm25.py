"""An incremental in-memory BM25 index over integer row ids.

Postings are ``term -> {row: term frequency}``, so adding or removing one chunk touches only its own
terms; there is never a full rebuild. Scoring uses the Lucene BM25 form
``idf * tf / (tf + k1 * (1 - b + b * dl / avgdl))`` with ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``;
``dl`` is the analyzer's word-position length (identifier parts do not lengthen a chunk).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from runiq.rag.lexical.query import MAX_QUERY_TERMS
from runiq.rag.lexical.tokenizer import Analyzer

__all__ = ["BM25Index", "BM25Parameters"]


@dataclass(frozen=True, slots=True, kw_only=True)
class BM25Parameters:
    """The standard defaults; not tuned to any collection."""

    k1: float = 1.5
    b: float = 0.75


class BM25Index:
    def __init__(self, analyzer: Analyzer | None = None, parameters: BM25Parameters | None = None) -> None:
        self._analyzer = analyzer or Analyzer()
        self._params = parameters or BM25Parameters()
        self._postings: dict[str, dict[int, int]] = {}
        self._lengths: dict[int, int] = {}
        self._total_length = 0

    @property
    def analyzer(self) -> Analyzer:
        return self._analyzer

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, row: int, text: str) -> None:
        if row in self._lengths:
            self.remove(row)
        indexed = self._analyzer.indexed(text)
        terms = indexed.counts
        length = indexed.length
        self._lengths[row] = length
        self._total_length += length
        for term, tf in terms.items():
            self._postings.setdefault(term, {})[row] = tf

    def remove(self, row: int) -> None:
        length = self._lengths.pop(row, None)
        if length is None:
            return
        self._total_length -= length
        empty: list[str] = []
        for term, rows in self._postings.items():
            if rows.pop(row, None) is not None and not rows:
                empty.append(term)
        for term in empty:
            del self._postings[term]

    def remove_text(self, row: int, text: str) -> None:
        """Remove a row when its text is known: touches only that text's terms."""
        length = self._lengths.pop(row, None)
        if length is None:
            return
        self._total_length -= length
        for term in set(self._analyzer.terms(text)):
            rows = self._postings.get(term)
            if rows is not None:
                rows.pop(row, None)
                if not rows:
                    del self._postings[term]

    def rows_with_all(self, terms: Iterable[str]) -> set[int] | None:
        """Rows containing every indexed term, or ``None`` when none of the terms is indexable."""
        result: set[int] | None = None
        for term in terms:
            for analysed in self._analyzer.terms(term):
                rows = set(self._postings.get(analysed, ()))
                result = rows if result is None else result & rows
        return result

    def scores(self, text: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """Rows with a positive score and their scores (unordered)."""
        terms = self._analyzer.query_terms(text)[:MAX_QUERY_TERMS]
        n = len(self._lengths)
        if not terms or n == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
        avgdl = self._total_length / n if self._total_length else 1.0
        k1, b = self._params.k1, self._params.b
        acc: dict[int, float] = {}
        for term, qtf in Counter(terms).items():
            postings = self._postings.get(term)
            if not postings:
                continue
            df = len(postings)
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5)) * qtf
            for row, tf in postings.items():
                norm = k1 * (1.0 - b + b * self._lengths[row] / avgdl)
                acc[row] = acc.get(row, 0.0) + idf * tf / (tf + norm)
        rows = np.fromiter(acc.keys(), dtype=np.int64, count=len(acc))
        values = np.fromiter(acc.values(), dtype=np.float64, count=len(acc))
        return rows, values
