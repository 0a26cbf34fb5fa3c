"""The tenancy boundary: a host-supplied retrieval scope applied as a mandatory filter.

The host resolves the scope for each request (for example the caller's tenant and data-residency
region, from a context variable set by its auth middleware). Every store receives it as part of the
metadata filter *before* retrieval, as a conjunct no ``$or`` or ``$not`` of the query can reach; a
query's own filters can only narrow it. A query filter that contradicts the scope (``tenant=b``
inside scope ``tenant=a``) returns no hits instead of widening.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from runiq.errors import RagValidationError
from runiq.rag._retrieval.query import RagQuery
from runiq.rag._stores.filters import FilterSpec, MetadataFilter, equality_key, validate_filters

__all__ = ["RetrievalScopeProvider", "ScopeConflict", "StaticRetrievalScope", "merge_scope"]

_SCALARS = (str, int, float, bool)


@runtime_checkable
class RetrievalScopeProvider(Protocol):
    """Returns the mandatory metadata filter for this request (``{}`` for no restriction).

    Usually equality (``{"tenant": "a"}``); any filter of :mod:`runiq.rag._stores.filters` is allowed.
    """

    def scope_for(self, query: RagQuery) -> FilterSpec: ...


class StaticRetrievalScope:
    """A fixed scope (a single-tenant deployment, or tests), validated when it is made."""

    def __init__(self, scope: FilterSpec) -> None:
        self._scope: FilterSpec = validate_filters(scope) or {}

    def scope_for(self, query: RagQuery) -> FilterSpec:
        return self._scope


def merge_scope(filters: FilterSpec | None, scope: FilterSpec) -> MetadataFilter | None:
    """AND the query filters with the scope. Returns ``None`` for "no filter"; raises on contradiction.

    The scope is always a conjunct of its own: keys the query does not name are merged into one
    mapping (whose entries are AND-combined), otherwise the result is ``{"$and": [scope, filters]}``.
    Either way no ``$or`` or ``$not`` in the query reaches the scope's conditions, so the query can only
    narrow it. A plain query value that the stores would not call equal to the scope's plain value
    (:mod:`runiq.rag._stores.filters`: ``3.0`` inside scope ``3`` narrows nothing, ``1`` contradicts
    ``True``) raises :class:`ScopeConflict`, which the retriever answers with no hits.
    """
    scoped = validate_filters(scope)
    query = validate_filters(filters)
    if scoped is None or query is None:
        return scoped or query
    shared = scoped.keys() & query.keys()
    for key in shared:
        if _contradicts(scoped[key], query[key]):
            raise ScopeConflict
    if all(_plain(scoped[key]) and _plain(query[key]) for key in shared):
        return validate_filters({**scoped, **query})
    return MetadataFilter.all_of(scoped, query)


def _plain(value: object) -> bool:
    return isinstance(value, _SCALARS)


def _contradicts(scoped: object, query: object) -> bool:
    if isinstance(scoped, _SCALARS) and isinstance(query, _SCALARS):
        return equality_key(scoped) != equality_key(query)
    return False


class ScopeConflict(RagValidationError):
    """Internal signal: the query asked for data outside its scope; the retriever answers with no hits."""

    def __init__(self) -> None:
        super().__init__("The query filters contradict the retrieval scope.")
