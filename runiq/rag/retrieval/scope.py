"""The tenancy boundary: a host-supplied retrieval scope applied as a mandatory filter.

The host resolves the scope for each request (for example the caller's tenant and data-residency
region, from a context variable set by its auth middleware). Every store receives it as part of the
metadata filter *before* retrieval; a query's own filters can only narrow it. A query filter that
contradicts the scope (``tenant=b`` inside scope ``tenant=a``) returns no hits instead of widening.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from runiq.errors import RagValidationError
from runiq.rag.documents import MetadataValue, freeze_metadata
from runiq.rag.retrieval.query import RagQuery
from runiq.rag.stores.filters import equality_key

__all__ = ["RetrievalScopeProvider", "ScopeConflict", "StaticRetrievalScope", "merge_scope"]


@runtime_checkable
class RetrievalScopeProvider(Protocol):
    """Returns the mandatory metadata equality filter for this request (``{}`` for no restriction)."""

    def scope_for(self, query: RagQuery) -> Mapping[str, MetadataValue]: ...


class StaticRetrievalScope:
    """A fixed scope (a single-tenant deployment, or tests)."""

    def __init__(self, scope: Mapping[str, MetadataValue]) -> None:
        self._scope = freeze_metadata(scope)

    def scope_for(self, query: RagQuery) -> Mapping[str, MetadataValue]:
        return self._scope


def merge_scope(
    filters: Mapping[str, MetadataValue] | None, scope: Mapping[str, MetadataValue]
) -> Mapping[str, MetadataValue] | None:
    """AND the query filters with the scope. Returns ``None`` for "no filter"; raises on contradiction.

    A query value contradicts the scope's when the stores would not call them equal
    (:mod:`runiq.rag.stores.filters`): ``3.0`` inside scope ``3`` narrows nothing, ``1`` contradicts ``True``.
    """
    if not scope:
        return filters
    merged = dict(freeze_metadata(scope))
    for key, value in (filters or {}).items():
        if key in merged and equality_key(merged[key]) != equality_key(value):
            raise ScopeConflict
        merged[key] = value
    return merged


class ScopeConflict(RagValidationError):
    """Internal signal: the query asked for data outside its scope; the retriever answers with no hits."""

    def __init__(self) -> None:
        super().__init__("The query filters contradict the retrieval scope.")
