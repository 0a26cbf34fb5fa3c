"""The one hash that stands for a document (or a source, or a hit) wherever its id must not appear.

Document ids are often paths, and paths carry names. Logs (``ingestion.document_failed``), events
(``ingestion.finished``, retrieval hit previews) and the dashboard's DTOs therefore show
:func:`identity_hash` of an id instead: the first 16 lower-case hex digits (64 bits) of its SHA-256.
Every one of them calls this function, so an operator who knows a document id finds it in all of
them with one value::

    python -c "from runiq.rag.providers import identity_hash; print(identity_hash('docs/a.md'))"

The hash is not keyed, on purpose. It keeps ids out of plain sight, and it lets the same document be
found across the logs, the events, the dashboard and other deployments without sharing a secret. It
does not hide an id someone can guess: whoever reads a log can hash ``docs/salaries-2024.md`` and
compare. So the logs and the dashboard stay access-controlled like the documents' own names; a
per-deployment key would defeat guessing only by making the value useless to operators who do not
hold that key.
"""

from __future__ import annotations

import hashlib
from typing import Final

__all__ = ["IDENTITY_HASH_LENGTH", "identity_hash"]

IDENTITY_HASH_LENGTH: Final = 16  # hex digits, 64 bits: two of 10^6 documents collide with odds of about 3 in 10^8
_SEPARATOR: Final = "\x1f"  # unit separator: ("a", "b\x1fc") would only collide with ids holding it


def identity_hash(*parts: str) -> str:
    """``identity_hash(document_id)`` names a document; ``identity_hash(document_id, chunk_id)`` a hit.

    Lone surrogates (an undecodable file name read with ``surrogateescape``) hash like any other text.
    """
    if not parts:
        raise ValueError("identity_hash needs at least one part")
    data = _SEPARATOR.join(parts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()[:IDENTITY_HASH_LENGTH]
