"""Top-k selection over a dense score array, keeping every row tied with the k-th.

``argpartition`` picks k of several equal scores arbitrarily; returning the whole tie at the boundary
lets the caller order by score and then by identity (``(document_id, chunk_id)``) and cut exactly,
whatever order the rows were stored in. Only positive scores are candidates: a row that holds no query
term scores 0.0.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise

import numpy as np
import numpy.typing as npt

__all__ = ["score_groups", "top_candidates"]


def top_candidates(
    scores: npt.NDArray[np.float64], k: int, among: npt.NDArray[np.int64] | None = None
) -> npt.NDArray[np.int64]:
    """Rows with a positive score that may be among the ``k`` best: the k best and all rows tied with
    the k-th, ascending. ``among`` (ascending rows) restricts the candidates, e.g. to a filter's rows."""
    if among is not None:
        among = among[among < scores.shape[0]]
        values = scores[among]
    else:
        values = scores
    size = values.shape[0]
    picked: npt.NDArray[np.int64] | None = None
    if k < size:
        kth = np.partition(values, size - k)[size - k]
        if kth > 0.0:
            picked = np.flatnonzero(values >= kth)
    if picked is None:
        picked = np.flatnonzero(values > 0.0)
    return picked if among is None else among[picked]


def score_groups(scores: npt.NDArray[np.float64], rows: npt.NDArray[np.int64]) -> Iterator[list[int]]:
    """``rows`` in groups of equal score, best group first, each ascending by row; lazily, so a caller
    that stops after k accepted rows never materialises the rest of a large pool."""
    if rows.shape[0] == 0:
        return
    values = scores[rows]
    order = np.lexsort((rows, -values))
    ordered_rows, ordered_values = rows[order], values[order]
    bounds = [0, *(np.flatnonzero(ordered_values[1:] != ordered_values[:-1]) + 1).tolist(), rows.shape[0]]
    for start, stop in pairwise(bounds):
        yield ordered_rows[start:stop].tolist()
