"""One term's posting list: the rows holding the term with their term frequencies.

Stored compactly in growable numpy arrays (``int32`` rows, ``uint8`` frequencies, widened to ``uint16``
or ``uint32`` when one chunk repeats the term more often): about 5 bytes per posting and no Python
object per posting.

* The main part is sorted by row. Appending a row above every stored row (bulk ingestion) is O(1)
  amortised.
* Removing a row leaves a tombstone (frequency 0, found by binary search) that scores exactly 0.0, so
  queries need no deletion mask; adding the row back (a document replace reuses its rows) revives
  the tombstone in place. When tombstones pass a quarter of the main part it is compacted: removals
  cost O(1) amortised and a list never carries more than a third of dead weight.
* A row below the highest stored one that is not a tombstone (a reused row, new to this term) goes to a
  small unsorted side part instead of shifting the main part (a 6 MB move for a term held by a
  million rows); the side part is merged into the main one when it passes a sixteenth of it.

Not thread-safe for writes; concurrent readers are safe while no write runs (the store's
readers-writer lock guarantees that).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["Part", "PostingList"]

_INITIAL_CAPACITY = 2
_GROWTH = 1.25
_TF_DTYPES = (np.uint8, np.uint16, np.uint32)
_SIDE_MIN = 16  # the side part may hold this many rows, or a sixteenth of the main part

Rows = npt.NDArray[np.int32]
Tfs = npt.NDArray[np.unsignedinteger]
Part = tuple[Rows, Tfs]


class _Arrays:
    """Rows and frequencies in two growable arrays."""

    __slots__ = ("rows", "size", "tfs")

    def __init__(self, capacity: int = _INITIAL_CAPACITY, tf_dtype: type[np.unsignedinteger] = np.uint8) -> None:
        self.rows: Rows = np.empty(capacity, dtype=np.int32)
        self.tfs: Tfs = np.empty(capacity, dtype=tf_dtype)
        self.size = 0

    def view(self) -> Part:
        return self.rows[: self.size], self.tfs[: self.size]

    def append(self, row: int, tf: int) -> None:
        size = self.size
        if size == self.rows.shape[0]:
            self.resize(max(size + 1, math.ceil(size * _GROWTH)))
        self.rows[size] = row
        self.tfs[size] = tf
        self.size = size + 1

    def resize(self, capacity: int) -> None:
        rows = np.empty(capacity, dtype=np.int32)
        tfs = np.empty(capacity, dtype=self.tfs.dtype)
        size = self.size
        rows[:size] = self.rows[:size]
        tfs[:size] = self.tfs[:size]
        self.rows, self.tfs = rows, tfs

    def widen(self, tf: int) -> None:
        """Make the frequency array able to hold ``tf``."""
        if tf > np.iinfo(self.tfs.dtype).max:
            self.tfs = self.tfs.astype(next(t for t in _TF_DTYPES if tf <= np.iinfo(t).max))

    def replace(self, rows: Rows, tfs: Tfs) -> None:
        self.rows, self.tfs, self.size = rows, tfs, rows.shape[0]


class PostingList:
    __slots__ = ("_dead", "_last", "_main", "_side")

    def __init__(self) -> None:
        self._main = _Arrays()
        self._side: _Arrays | None = None
        self._dead = 0  # tombstones in the main part
        self._last = -1  # the highest row in the main part (or -1)

    @property
    def frequency(self) -> int:
        """Rows holding the term (tombstones excluded): the term's document frequency."""
        side = 0 if self._side is None else self._side.size
        return self._main.size - self._dead + side

    @property
    def nbytes(self) -> int:
        parts = (self._main,) if self._side is None else (self._main, self._side)
        return sum(int(p.rows.nbytes + p.tfs.nbytes) for p in parts)

    def parts(self) -> list[Part]:
        """Rows and frequencies: the sorted main part (tombstones included, frequency 0), then the side
        part if any. Every row appears once. Views: valid until the next write."""
        if self._side is None or not self._side.size:
            return [self._main.view()]
        return [self._main.view(), self._side.view()]

    def live_rows(self) -> Rows:
        """Rows holding the term (not sorted when a side part exists)."""
        rows, tfs = self._main.view()
        live = rows[tfs > 0] if self._dead else rows
        if self._side is None or not self._side.size:
            return live
        return np.concatenate([live, self._side.view()[0]])

    def add(self, row: int, tf: int) -> None:
        """Record ``tf`` (>= 1) for ``row``; the row must not hold the term already (except as a tombstone)."""
        if tf > 255:
            self._main.widen(tf)
            if self._side is not None:
                self._side.widen(tf)
        if row > self._last:
            self._main.append(row, tf)
            self._last = row
            return
        rows, tfs = self._main.view()
        at = int(rows.searchsorted(np.int32(row)))  # a Python int would make numpy copy the array to int64
        if at < rows.shape[0] and rows[at] == row:  # a tombstone
            self._dead -= 1
            tfs[at] = tf
            return
        if self._side is None:
            self._side = _Arrays(tf_dtype=self._main.tfs.dtype.type)
            self._side.widen(tf)
        self._side.append(row, tf)
        if self._side.size > max(_SIDE_MIN, self._main.size >> 4):
            self._merge()

    def remove(self, row: int) -> bool:
        """Drop ``row``'s posting (a tombstone in the main part); False when the row does not hold the term."""
        if row <= self._last:
            rows, tfs = self._main.view()
            at = int(rows.searchsorted(np.int32(row)))
            if rows[at] == row:
                if not tfs[at]:
                    return False
                tfs[at] = 0
                self._dead += 1
                if self._dead * 4 > self._main.size:
                    self._compact()
                return True
        return self._remove_side(row)

    def _remove_side(self, row: int) -> bool:
        side = self._side
        if side is None or not side.size:
            return False
        found = np.flatnonzero(side.rows[: side.size] == row)
        if not found.size:
            return False
        at, last = int(found[0]), side.size - 1
        side.rows[at], side.tfs[at] = side.rows[last], side.tfs[last]
        side.size = last
        return True

    def _merge(self) -> None:
        side = self._side
        assert side is not None
        extra_rows, extra_tfs = side.view()
        order = np.argsort(extra_rows, kind="stable")
        extra_rows, extra_tfs = extra_rows[order], extra_tfs[order]
        rows, tfs = self._main.view()
        at = rows.searchsorted(extra_rows)
        self._main.replace(np.insert(rows, at, extra_rows), np.insert(tfs, at, extra_tfs))
        self._last = max(self._last, int(extra_rows[-1]))
        self._side = None

    def _compact(self) -> None:
        rows, tfs = self._main.view()
        keep = tfs > 0
        kept_rows, kept_tfs = rows[keep], tfs[keep]
        live = kept_rows.shape[0]
        self._main.rows[:live] = kept_rows
        self._main.tfs[:live] = kept_tfs
        self._main.size, self._dead = live, 0
        self._last = int(kept_rows[-1]) if live else -1
        if live * 4 < self._main.rows.shape[0]:
            self._main.resize(max(_INITIAL_CAPACITY, math.ceil(live * _GROWTH)))
