"""The documented maximum of every count a caller passes with a request, checked in one place.

A count outside its range is a bad request (:class:`~runiq.errors.RagValidationError`), refused before
any store work, never a backend failure: without the bound a ``top_k`` past 64 bits reached
PostgreSQL's ``LIMIT`` and came back as ``VectorStoreUnavailableError``. Derived counts (the hybrid
candidate depth, ``top_k * RetrievalOptions.hybrid_candidate_multiplier``) are capped at the same
maximum, so a valid query never asks a store for more than it accepts.
"""

from __future__ import annotations

from runiq.errors import RagValidationError

__all__ = ["MAX_CANDIDATES", "validate_count"]

# The most candidates one query or one store call may ask for: RagQuery.top_k and candidate_depth,
# and top_k of VectorStore.search and LexicalSearch.lexical_search. Far above any useful context
# window, far below where a LIMIT or a numpy index could overflow.
MAX_CANDIDATES = 10_000


def validate_count(value: object, name: str, *, maximum: int = MAX_CANDIDATES) -> int:
    """``value`` as an ``int`` from 1 to ``maximum``; ``name`` is a literal naming the option."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise RagValidationError(f"{name} must be an integer from 1 to {maximum}.")
    return int(value)
