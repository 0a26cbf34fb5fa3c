"""Top-k selection over a dense score array, keeping every row tied with the k-th.

``argpartition`` picks k of several equal scores arbitrarily; returning the whole tie at the boundary
lets the caller order by score and then by identity (``(document_id, chunk_id)``) and cut exactly,
whatever order the rows were stored in. Only positive scores are candidates: a row that holds no query
term scores 0.0.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["score_groups", "top_candidates"]


def top_candidates(
    scores: npt.NDArray[np.float64],
    k: int,
    among: npt.NDArray[np.int64] | None = None,
    probe: npt.NDArray[Any] | None = None,
) -> npt.NDArray[np.int64]:
    """Rows with a positive score that may be among the ``k`` best: the k best and all rows tied with
    the k-th, ascending. ``among`` (ascending rows) restricts the candidates, e.g. to a filter's rows.

    ``probe`` is any set of at least ``k`` rows with positive scores (e.g. those of the rarest query
    term): the k-th best score among them cannot exceed the overall k-th best, so one comparison pass
    narrows the partition to the rows that reach it.
    """
    if among is None and probe is not None and probe.shape[0] >= k:
        held = scores[probe]
        floor = np.partition(held, held.shape[0] - k)[held.shape[0] - k]
        if floor > 0.0:
            pool = np.flatnonzero(scores >= floor)
            return pool[_at_least_kth(scores[pool], k)]
    if among is not None:
        among = among[among < scores.shape[0]]
        values = scores[among]
    else:
        values = scores
    picked = np.flatnonzero(values > 0.0)
    if k < picked.shape[0]:
        picked = picked[_at_least_kth(values[picked], k)]
    return picked if among is None else among[picked]


def _at_least_kth(values: npt.NDArray[np.float64], k: int) -> npt.NDArray[np.bool_]:
    """Mask of the values at least as large as the k-th largest (all of them when there are <= k)."""
    if values.shape[0] <= k:
        return np.ones(values.shape[0], dtype=np.bool_)
    cut = values.shape[0] - k
    mask: npt.NDArray[np.bool_] = values >= np.partition(values, cut)[cut]
    return mask


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
