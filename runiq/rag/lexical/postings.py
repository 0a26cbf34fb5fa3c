"""One term's posting list: the rows holding the term, ascending, with their term frequencies.

Stored compactly in two growable numpy arrays (``int32`` rows, ``uint16`` frequencies, widened to
``uint32`` for a term repeated more than 65,535 times in one chunk): about 6 bytes per posting and no
Python object per posting. Appending a row above every stored row (bulk ingestion) is O(1)
amortised. Removing a row leaves a tombstone (frequency 0, found by binary search) that scores exactly
0.0, so queries need no deletion mask; re-adding the row (a document replace reuses its rows) revives
the tombstone in place. When tombstones pass a quarter of the list it is compacted, so removals
cost O(1) amortised and a list never carries more than a third of dead weight.

Not thread-safe for writes; concurrent readers are safe while no write runs (the store's
readers-writer lock guarantees that).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["PostingList"]

_INITIAL_CAPACITY = 2
_GROWTH = 1.25
_NARROW_TF = np.uint16
_NARROW_TF_MAX = int(np.iinfo(_NARROW_TF).max)


class PostingList:
    __slots__ = ("_dead", "_last", "_rows", "_size", "_tfs")

    def __init__(self) -> None:
        self._rows: npt.NDArray[np.int32] = np.empty(_INITIAL_CAPACITY, dtype=np.int32)
        self._tfs: npt.NDArray[np.unsignedinteger] = np.empty(_INITIAL_CAPACITY, dtype=_NARROW_TF)
        self._size = 0  # entries in use, tombstones included
        self._dead = 0  # tombstones among them
        self._last = -1  # the highest stored row (or -1)

    @property
    def frequency(self) -> int:
        """Rows holding the term (tombstones excluded): the term's document frequency."""
        return self._size - self._dead

    @property
    def nbytes(self) -> int:
        return int(self._rows.nbytes + self._tfs.nbytes)

    def arrays(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.unsignedinteger]]:
        """Rows (ascending, unique) and frequencies, tombstones included with frequency 0. Views: valid
        until the next write."""
        return self._rows[: self._size], self._tfs[: self._size]

    def live_rows(self) -> npt.NDArray[np.int32]:
        rows, tfs = self.arrays()
        return rows[tfs > 0] if self._dead else rows

    def add(self, row: int, tf: int) -> None:
        """Record ``tf`` (>= 1) for ``row``; the row must not hold the term already (except as a tombstone)."""
        if tf > _NARROW_TF_MAX and self._tfs.dtype == _NARROW_TF:
            self._tfs = self._tfs.astype(np.uint32)
        size = self._size
        if row > self._last:
            if size == self._rows.shape[0]:
                self._resize(_grown(size))
            self._rows[size] = row
            self._tfs[size] = tf
            self._size = size + 1
            self._last = row
            return
        at = int(self._rows[:size].searchsorted(row))
        if self._rows[at] == row:  # a tombstone (row <= _last, so ``at`` is in range)
            self._dead -= 1
            self._tfs[at] = tf
            return
        self._insert(at, row, tf)

    def remove(self, row: int) -> bool:
        """Turn ``row``'s posting into a tombstone; False when the row does not hold the term."""
        if row > self._last:
            return False
        at = int(self._rows[: self._size].searchsorted(row))
        if self._rows[at] != row or not self._tfs[at]:
            return False
        self._tfs[at] = 0
        self._dead += 1
        if self._dead * 4 > self._size:
            self._compact()
        return True

    def _insert(self, at: int, row: int, tf: int) -> None:
        size = self._size
        if size == self._rows.shape[0]:
            self._resize(_grown(size))
        self._rows[at + 1 : size + 1] = self._rows[at:size]  # numpy copies overlapping slices correctly
        self._tfs[at + 1 : size + 1] = self._tfs[at:size]
        self._rows[at] = row
        self._tfs[at] = tf
        self._size = size + 1

    def _compact(self) -> None:
        rows, tfs = self.arrays()
        keep = tfs > 0
        live = int(np.count_nonzero(keep))
        kept_rows, kept_tfs = rows[keep], tfs[keep]
        self._rows[:live] = kept_rows
        self._tfs[:live] = kept_tfs
        self._size, self._dead = live, 0
        self._last = int(kept_rows[-1]) if live else -1
        if live * 4 < self._rows.shape[0]:
            self._resize(max(_INITIAL_CAPACITY, _grown(live)))

    def _resize(self, capacity: int) -> None:
        rows = np.empty(capacity, dtype=np.int32)
        tfs = np.empty(capacity, dtype=self._tfs.dtype)
        size = self._size
        rows[:size] = self._rows[:size]
        tfs[:size] = self._tfs[:size]
        self._rows, self._tfs = rows, tfs


def _grown(size: int) -> int:
    return max(size + 1, math.ceil(size * _GROWTH))
