"""Buckets of a shared run: which documents a part holds, and which ids the parts saw.

A document belongs to bucket ``digest(id) % buckets``, where the digest is the first 8 bytes of
BLAKE2b over the id: stable across processes, machines and Python versions (unlike ``hash()``). A
bucket's pass records the digests of every id it admitted, delivered or failed, as sorted
little-endian uint64s; the run's finisher keeps a stored document when its digest is among them.
Two ids with the same digest only keep a stale document, never delete a live one.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["BucketFilter", "SeenDigests", "bucket_of", "document_digest"]

# numpy is imported where it is used: a shared run has opened its store and embedder (numpy) by then,
# and building a host (``runiq status``) does not need it.
_DIGEST = "<u8"


def document_digest(document_id: str) -> int:
    raw = hashlib.blake2b(document_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(raw, "little")


def bucket_of(document_id: str, buckets: int) -> int:
    return document_digest(document_id) % buckets


class BucketFilter:
    """The pipeline's document filter for one bucket: admits that bucket's ids and remembers their digests."""

    def __init__(self, bucket: int, buckets: int) -> None:
        self._bucket = bucket
        self._buckets = buckets
        self._seen: set[int] = set()

    def __call__(self, document_id: str) -> bool:
        digest = document_digest(document_id)
        if digest % self._buckets != self._bucket:
            return False
        self._seen.add(digest)
        return True

    def digests(self) -> bytes:
        import numpy as np

        return np.array(sorted(self._seen), dtype=_DIGEST).tobytes()


class SeenDigests:
    """The union of every bucket's recorded digests: what the whole run saw."""

    def __init__(self, recorded: Iterable[bytes]) -> None:
        import numpy as np

        arrays = [np.frombuffer(raw, dtype=_DIGEST) for raw in recorded]
        self._digests: npt.NDArray[np.uint64] = np.unique(np.concatenate(arrays)) if arrays else np.empty(0, _DIGEST)

    def __len__(self) -> int:
        return int(self._digests.size)

    def unseen(self, document_ids: Sequence[str]) -> list[str]:
        """The ids among ``document_ids`` that no bucket saw."""
        import numpy as np

        digests = np.array([document_digest(d) for d in document_ids], dtype=_DIGEST)
        known = np.isin(digests, self._digests, assume_unique=False)
        return [document_id for document_id, seen in zip(document_ids, known, strict=True) if not seen]
