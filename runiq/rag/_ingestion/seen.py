"""The document ids a run has seen, in 8 bytes each: what decides duplicates and stale documents.

An id is kept as its 64-bit ``hash`` (keyed per process), so a run over millions of documents holds
megabytes, not every id's text: a collision could only make a duplicate look new or keep a stale
document one more run. Ids are checked and added a window at a time with numpy (per id in Python, the
checks were a seventh of a re-ingestion).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["SeenIds"]

_Hashes = npt.NDArray[np.int64]


class SeenIds:
    _FRESH = 8192  # hashes kept in small sorted arrays before they are merged into the big one

    def __init__(self) -> None:
        self._merged: _Hashes = np.empty(0, dtype=np.int64)
        self._fresh: list[_Hashes] = []
        self._fresh_count = 0

    def add_all(self, document_ids: Sequence[str]) -> list[bool]:
        """Record the ids; for each, True when it is new (not seen before, nor earlier in this call)."""
        hashes = _hashes(document_ids)
        first = np.zeros(len(hashes), dtype=bool)
        first[np.unique(hashes, return_index=True)[1]] = True
        new = first & ~self._known(hashes)
        self._fresh.append(np.sort(hashes[new]))
        self._fresh_count += int(new.sum())
        if self._fresh_count >= self._FRESH or len(self._fresh) >= 16:
            self._merged = np.sort(np.concatenate((self._merged, *self._fresh)))
            self._fresh, self._fresh_count = [], 0
        return [bool(flag) for flag in new]

    def unseen(self, document_ids: Sequence[str]) -> list[str]:
        """The ids that were never recorded."""
        known = self._known(_hashes(document_ids))
        return [document_id for document_id, seen in zip(document_ids, known, strict=True) if not seen]

    def _known(self, hashes: _Hashes) -> npt.NDArray[np.bool_]:
        known = np.zeros(len(hashes), dtype=bool)
        for recorded in (self._merged, *self._fresh):
            if len(recorded):
                at = np.minimum(np.searchsorted(recorded, hashes), len(recorded) - 1)
                known |= recorded[at] == hashes
        return known


def _hashes(document_ids: Sequence[str]) -> _Hashes:
    return np.fromiter(map(hash, document_ids), dtype=np.int64, count=len(document_ids))
